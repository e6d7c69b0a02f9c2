// Command cairn is the single Cairn binary: the object store server and, in time, its ring,
// admin, client, bench and advisor tools.
package main

import (
	"fmt"
	"os"
)

func main() {
	if err := newRootCommand().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "cairn:", err)
		os.Exit(1)
	}
}
