long long a;
void b();
void c() { b(!0 > a); }
