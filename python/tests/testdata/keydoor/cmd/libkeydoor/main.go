// Command libkeydoor is the fast lane's library of package keydoor's environments.
package main

import (
	"example.com/keydoor"
	"github.com/batonrl/baton/capi"
)

func init() { capi.Use(keydoor.Register) }

func main() {}
