const char SelfBytes[3][3] = {
    10, 2,
    #embed "data.bin" limit(2)
};
