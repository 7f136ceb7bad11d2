package scramble_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/batonrl/baton/cli"
	"github.com/batonrl/baton/envs/catalog"
	"github.com/batonrl/baton/scramble"
)

// A command line with baton's environments and the scrambled maze: baton run plays
// maze-scrambled with its random policies, the permutations drawn from seed 7 (the
// summary's lines of times left out).
func Example_commandLine() {
	var out bytes.Buffer
	code := cli.Run(context.Background(),
		[]string{"run", "maze-scrambled", "--env-config", `{"scramble": 7}`, "--trials", "4", "--workers", "2", "--seed", "1"},
		nil, &out, io.Discard, catalog.Register, scramble.Register("maze"))
	if code != 0 {
		panic(code)
	}
	for line := range strings.Lines(out.String()) {
		if strings.HasPrefix(line, "env ") || strings.HasPrefix(line, "trials ") || strings.HasPrefix(line, "env steps ") {
			fmt.Print(line)
		}
	}
	// Output:
	// env            maze-scrambled (seed 1; strategy=random, motion=random)
	// trials         4 on 2 workers (4 ended, 0 stopped, 0 failed)
	// env steps      202
}
