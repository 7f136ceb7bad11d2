package models_test

import (
	"context"
	"fmt"
	"os"

	"github.com/batonrl/baton/models"
)

func Example() {
	dir, _ := os.MkdirTemp("", "models")
	defer os.RemoveAll(dir)
	store, err := models.OpenDir(dir, models.WithKeep(5))
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	m, _ := store.Put(ctx, models.Meta{Name: "maze-strategy", Format: "onnx", Env: "maze", Agent: "strategy"}, []byte("graph"))
	fmt.Println(m.Ref())

	name, version, _ := models.ParseRef("maze-strategy@latest")
	m, data, _ := store.Get(ctx, name, version)
	fmt.Println(m.Ref(), len(data))

	_, _, err = store.Get(ctx, "maze-strategy", 9)
	fmt.Println(err)
	// Output:
	// maze-strategy@1
	// maze-strategy@1 5
	// models: model "maze-strategy" has no version 9
}
