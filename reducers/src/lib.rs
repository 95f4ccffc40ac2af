//! Pure reduction passes over preprocessed C, C++ and HIP text, and the parallel driver that
//! applies them against an interestingness test supplied by the caller. No process or file I/O.
