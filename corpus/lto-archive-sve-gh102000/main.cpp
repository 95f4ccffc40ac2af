void e(bool f[]);
void run(bool *flags) { e(flags); }
