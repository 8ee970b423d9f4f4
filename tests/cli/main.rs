mod diff_base;
