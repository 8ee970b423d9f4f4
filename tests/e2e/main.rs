mod snapshot;
