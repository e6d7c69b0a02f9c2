package workload

import (
	"strconv"
	"testing"
	"time"
)

// BenchmarkObserve is the monitor's cost on a request's path: one Observe under its mutex, from
// every core at once, over 1,000 buckets (issue 28 asks it measured: a front end calls it once
// a request). Run with -cpu 1,2 to see what contention adds.
func BenchmarkObserve(b *testing.B) {
	m, err := New(Config{})
	if err != nil {
		b.Fatal(err)
	}
	names := make([]string, 1000)
	for i := range names {
		names[i] = "bucket-" + strconv.Itoa(i)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			m.Observe(Observation{Account: "acct", Bucket: names[i%len(names)], Kind: Kind(i % 3), Size: 4096, Latency: time.Millisecond, In: 4096})
			i++
		}
	})
}

// BenchmarkLargeBucket is the request lanes' lookup on a request's path.
func BenchmarkLargeBucket(b *testing.B) {
	m, err := New(Config{})
	if err != nil {
		b.Fatal(err)
	}
	for i := range 100 {
		m.Observe(Observation{Account: "acct", Bucket: "b" + strconv.Itoa(i), Kind: Write, Size: 8 << 20})
	}
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.LargeBucket("b7")
		}
	})
}
