package e2e

import (
	"bufio"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// Metric returns the sum of a metric's samples on an endpoint's /metrics (over its labels),
// or one series' when name has its labels (name{label="value",...}); 0 when absent.
func Metric(t testing.TB, endpoint, name string) float64 {
	t.Helper()
	resp, err := http.Get(endpoint + "/metrics")
	if err != nil {
		t.Fatalf("metrics of %s: %v", endpoint, err)
	}
	defer resp.Body.Close()
	sum := 0.0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name) || len(line) == len(name) || (line[len(name)] != ' ' && line[len(name)] != '{') {
			continue
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			t.Fatalf("metrics of %s: %q: %v", endpoint, line, err)
		}
		sum += v
	}
	return sum
}
