auto X = []<class = void>() 
    requires requires { []() {}; }
{ return 1; }();
