package calibrate

import (
	"errors"
	"fmt"
	"math"

	"github.com/cairn-store/cairn/internal/advisor"
)

// ErrNoOperations is returned for a measured class that completed no operations.
var ErrNoOperations = errors.New("calibrate: no operations completed")

// snapshot is the counters of a cluster at one moment.
type snapshot struct {
	Proxy   procSample
	Storage procSample // summed over the storage nodes
	Syncs   float64    // WAL and file fsyncs, summed over the storage nodes
}

func (a snapshot) sub(b snapshot) snapshot {
	return snapshot{a.Proxy.sub(b.Proxy), a.Storage.sub(b.Storage), a.Syncs - b.Syncs}
}

// measurement is one class's run: what the cluster used, and what the client did.
type measurement struct {
	Op       string
	Size     int64   // the class's object size (the point's size)
	Ops      int64   // successful operations
	Body     float64 // object bytes the client moved, per operation
	Visits   float64 // storage visits per operation
	Used     snapshot
	P50Ms    float64
	Replicas int
}

// point turns a measurement into a demand point. The proxy does no file I/O of its own (but
// its log), so its read and write system-call bytes are its network bytes: the client's part is
// the object body the bench moved, the rest is taken as the backend's (request and response
// headers of the client are counted there: /proc cannot tell one socket from another). The
// storage nodes' block-device bytes and fsyncs are their disk's; the listing shares the
// device on a local cluster, so listing figures stay zero and their cost is in the data
// figures.
func (m measurement) point() (advisor.Point, error) {
	if m.Ops <= 0 {
		return advisor.Point{}, fmt.Errorf("%w: %s of %d bytes", ErrNoOperations, m.Op, m.Size)
	}
	n := float64(m.Ops)
	v := m.Visits
	u := m.Used
	p := advisor.Point{
		Size:              m.Size,
		ProxyCPUSeconds:   nonNeg(u.Proxy.CPUSeconds / n),
		StorageCPUSeconds: nonNeg(u.Storage.CPUSeconds / (n * v)),
		DataBytes:         nonNeg((u.Storage.ReadBytes + u.Storage.WriteBytes) / (n * v)),
		DataOps:           nonNeg(u.Syncs / (n * v)),
		Fsyncs:            nonNeg(u.Syncs / (n * v)),
	}
	switch m.Op {
	case "put":
		p.ClientInBytes = m.Body
	case "get":
		p.ClientOutBytes = m.Body
	}
	p.BackendInBytes = nonNeg((u.Proxy.RChar/n - p.ClientInBytes) / v)
	p.BackendOutBytes = nonNeg((u.Proxy.WChar/n - p.ClientOutBytes) / v)
	return p, nil
}

func nonNeg(v float64) float64 {
	if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

// Header bytes assumed per storage visit where a server's socket bytes cannot be read: a
// request line and headers out, a status line and headers back (the shipped defaults'
// figures, docs/advisor.md).
const (
	assumedRequestHeaderBytes  = 500
	assumedResponseHeaderBytes = 200
)

// socketBytesUnseen says whether the proxy's /proc/<pid>/io missed its socket traffic: a
// server that moves its bytes with recv/send (Python's, OpenStack Swift's) leaves rchar and
// wchar at its file I/O, and then a GET's backend bytes come out below the body it fetched.
func socketBytesUnseen(d *advisor.Demands) bool {
	for _, p := range d.Ops["get"] {
		if p.Size > 0 && p.BackendInBytes < float64(p.Size)/2 {
			return true
		}
	}
	return false
}

// assumeBackendBytes replaces the backend bytes of every point by the body each visit must
// carry (a PUT's fragment or replica out, a GET's back) plus assumed headers.
func assumeBackendBytes(d *advisor.Demands) {
	for op, pts := range d.Ops {
		for i := range pts {
			p := &pts[i]
			p.BackendOutBytes, p.BackendInBytes = assumedRequestHeaderBytes, assumedResponseHeaderBytes
			switch op {
			case "put":
				p.BackendOutBytes += float64(p.Size)
			case "get":
				p.BackendInBytes += float64(p.Size)
			}
		}
	}
}
