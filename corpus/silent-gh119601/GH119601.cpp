int main()
{
    return
    []
    (auto&&...)
    requires (not not []{}) // segfault
    //requires true // this is fine
    { return 42; }
    ();
}
