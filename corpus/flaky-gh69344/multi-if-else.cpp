#include <ctime>
#include <iostream>

using namespace std;

int getVal() {
    srand(time(0));
    return rand();
}

int main() {
    int val = getVal();
    val = val % 10000;
    if (val == -1) {
        printf("%d\n", val);
    }
#include "if.inc"
}
