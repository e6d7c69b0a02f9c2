package workload

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{
		"4096": 4096, "4KiB": 4096, "4kib": 4096, "4K": 4096, "1MiB": 1 << 20, "1M": 1 << 20,
		"1GiB": 1 << 30, "4KB": 4000, "100kb": 100_000, "10MB": 10_000_000, "1GB": 1e9,
		"1.5MiB": 3 << 19, "0": 0, "12B": 12, " 8 KiB ": 8192,
	} {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "KiB", "4XB", "-1", "1.3B", "2TiB", "1e3", "1..2K"} {
		if n, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", in, n)
		}
	}
}

func TestFormatSize(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0B", 12: "12B", 4096: "4KiB", 1 << 20: "1MiB", 3 << 19: "1536KiB", 5 << 30: "5GiB",
		1000: "1KB", 100_000: "100KB", 10_000_000: "10MB", 1e9: "1GB", 1500: "1500B",
	} {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
		if back, err := ParseSize(FormatSize(n)); err != nil || back != n {
			t.Errorf("FormatSize(%d) = %q reads back as %d, %v", n, FormatSize(n), back, err)
		}
	}
}

func TestParseSizeDist(t *testing.T) {
	for in, want := range map[string]SizeDist{
		"4KiB":                     ConstantSize(4096),
		"1KiB-128KiB":              UniformSize(1024, 128<<10),
		"1KiB–128KiB":              UniformSize(1024, 128<<10),
		"4KiB-4KiB":                ConstantSize(4096),
		"4KiB:70,1MiB-8MiB:30":     {Buckets: []SizeBucket{{4096, 4096, 70}, {1 << 20, 8 << 20, 30}}},
		"histogram(4KiB:1, 1KB:2)": {Buckets: []SizeBucket{{4096, 4096, 1}, {1000, 1000, 2}}},
	} {
		got, err := ParseSizeDist(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("ParseSizeDist(%q) = %+v, %v; want %+v", in, got, err, want)
		}
		// String prints what ParseSizeDist reads.
		if back, err := ParseSizeDist(got.String()); err != nil || !reflect.DeepEqual(back, got) {
			t.Errorf("ParseSizeDist(%q) = %+v, %v; want %+v", got.String(), back, err, got)
		}
	}
	for _, in := range []string{"", "8KiB-4KiB", "4KiB:x", "4KiB,1KiB", "6GiB", "4KiB:0", "4KiB:-1,1KiB:2", "1KiB-"} {
		if d, err := ParseSizeDist(in); err == nil {
			t.Errorf("ParseSizeDist(%q) = %+v, want an error", in, d)
		}
	}
}

func TestSizeDistString(t *testing.T) {
	for _, c := range []struct {
		d    SizeDist
		want string
	}{
		{ConstantSize(4096), "4KiB"},
		{UniformSize(1024, 128<<10), "1KiB–128KiB"},
		{SizeDist{Buckets: []SizeBucket{{4096, 4096, 70}, {1 << 20, 8 << 20, 30}}}, "histogram(4KiB:70, 1MiB–8MiB:30)"},
	} {
		if got := c.d.String(); got != c.want {
			t.Errorf("String() = %q, want %q", got, c.want)
		}
	}
}

func TestSizeSample(t *testing.T) {
	hist := SizeDist{Buckets: []SizeBucket{{4096, 4096, 70}, {0, 0, 0}, {1 << 20, 8 << 20, 30}}}
	for _, c := range []struct {
		d         SizeDist
		lo, hi    int64
		mean, max float64
	}{
		{ConstantSize(4096), 4096, 4096, 4096, 4096},
		{ConstantSize(0), 0, 0, 0, 0},
		{UniformSize(1024, 128<<10), 1024, 128 << 10, (1024 + 128<<10) / 2.0, 128 << 10},
		{UniformSize(1000, 100_000), 1000, 100_000, 50_500, 100_000},
		{hist, 4096, 8 << 20, 0.7*4096 + 0.3*(9<<20)/2.0, 8 << 20},
	} {
		if got := c.d.Mean(); math.Abs(got-c.mean) > 1e-6*c.mean {
			t.Errorf("%v: Mean() = %v, want %v", c.d, got, c.mean)
		}
		if got := c.d.MaxSize(); got != int64(c.max) {
			t.Errorf("%v: MaxSize() = %d, want %v", c.d, got, c.max)
		}
		r := rand.New(rand.NewPCG(1, 2))
		const n = 100_000
		var sum float64
		seenLo, seenHi := int64(math.MaxInt64), int64(0)
		for range n {
			v := c.d.Sample(r)
			if v < c.lo || v > c.hi {
				t.Fatalf("%v: Sample() = %d, outside [%d, %d]", c.d, v, c.lo, c.hi)
			}
			sum += float64(v)
			seenLo, seenHi = min(seenLo, v), max(seenHi, v)
		}
		// The standard error of the mean is at most (hi-lo)/2/sqrt(n) ≈ 0.16% of the range;
		// 2% is over ten of them, and the seed is fixed anyway.
		if got := sum / n; math.Abs(got-c.mean) > 0.02*float64(c.hi-c.lo)+1e-9 {
			t.Errorf("%v: sample mean %.0f, want about %.0f", c.d, got, c.mean)
		}
		if c.lo != c.hi && c.d.Buckets == nil && (seenLo > c.lo+(c.hi-c.lo)/100 || seenHi < c.hi-(c.hi-c.lo)/100) {
			t.Errorf("%v: samples span only [%d, %d]", c.d, seenLo, seenHi)
		}
	}
}

func TestHistogramWeights(t *testing.T) {
	d := SizeDist{Buckets: []SizeBucket{{1, 1, 1}, {2, 2, 0}, {3, 3, 6}, {10, 20, 3}}}
	r := rand.New(rand.NewPCG(3, 4))
	counts := map[string]int{}
	const n = 100_000
	for range n {
		switch v := d.Sample(r); {
		case v == 1:
			counts["1"]++
		case v == 2:
			t.Fatal("picked a bucket of weight 0")
		case v == 3:
			counts["3"]++
		case v >= 10 && v <= 20:
			counts["10-20"]++
		default:
			t.Fatalf("Sample() = %d, in no bucket", v)
		}
	}
	for k, want := range map[string]float64{"1": 0.1, "3": 0.6, "10-20": 0.3} {
		if got := float64(counts[k]) / n; math.Abs(got-want) > 0.01 {
			t.Errorf("bucket %s: share %.3f, want %.2f", k, got, want)
		}
	}
}

func TestSampleInvalidDoesNotPanic(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, d := range []SizeDist{
		{Min: 10, Max: 5},
		{Buckets: []SizeBucket{{5, 1, 0}}},
		{Buckets: []SizeBucket{{1, 2, -1}}},
	} {
		d.Sample(r)
		d.MaxSize()
		d.Mean()
		_ = d.String()
	}
}
