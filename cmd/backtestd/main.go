// Command backtestd is the backtest management service.
package main

func main() {}
