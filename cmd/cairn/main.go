// Command cairn is the single Cairn binary: the object store server and, in time, its ring,
// admin, client, bench and advisor tools.
package main

import (
	"fmt"
	"os"
	"time"

	"github.com/cairn-store/cairn/internal/meta"
)

func main() {
	// A clock wrong by the given duration, for the robustness tier's clock-skew fault
	// (test/robustness); documented in docs/testing.md, never needed otherwise.
	if v := os.Getenv("CAIRN_TEST_CLOCK_OFFSET"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			fmt.Fprintln(os.Stderr, "cairn: CAIRN_TEST_CLOCK_OFFSET:", err)
			os.Exit(2)
		}
		fmt.Fprintf(os.Stderr, "cairn: WARNING: this process's clock runs %v off the machine's (CAIRN_TEST_CLOCK_OFFSET)\n", d)
		meta.SetClockOffset(d)
	}
	if err := newRootCommand().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "cairn:", err)
		os.Exit(1)
	}
}
