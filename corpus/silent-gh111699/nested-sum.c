#define T1 x
#define T2 T1 + T1
#define T4 T2 + T2
#define T8 T4 + T4
#define T16 T8 + T8
#define T32 T16 + T16
#define T64 T32 + T32
#define T128 T64 + T64
#define T256 T128 + T128
#define T512 T256 + T256
#define T1024 T512 + T512
#define T2048 T1024 + T1024
#define T4096 T2048 + T2048
#define T8192 T4096 + T4096
#define T16384 T8192 + T8192
#define T32768 T16384 + T16384
#define T65536 T32768 + T32768

int f(int x) { return T65536; }
