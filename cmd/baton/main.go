package main

import (
	"os"

	"github.com/batonrl/baton/cli"
)

func main() { os.Exit(cli.Main()) }
