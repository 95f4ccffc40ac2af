/* Table lookup built for a CORE-V (xcvmem) rv64 core (gh-101067). */
int a[1];
int b, d;
char c;
void e() {
  a[0] = d;
  b = a[c];
}
