/* Caller side: refreshes the lookup and folds results into a checksum. */
void e(void);
extern int b;
static unsigned sum;
static unsigned mix(unsigned x, unsigned y) { return (x * 31u) ^ (y + 7u); }
unsigned refresh(int n) {
  for (int i = 0; i < n; i++) {
    e();
    sum = mix(sum, (unsigned)b);
  }
  return sum;
}
