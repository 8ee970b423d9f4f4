mod diff;
