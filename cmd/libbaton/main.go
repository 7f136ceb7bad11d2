package main

// main is empty: the library is loaded, not run.
func main() {}
