package localcluster

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Link is the network path to one storage node, for tests of failures that are not a dead
// process: a relay on the address the rings name the node by, which the node advertises
// (--advertise) while it listens elsewhere. It can refuse connections (a partitioned node:
// its port closed, open connections cut) and delay every chunk it forwards (a slow link,
// what tc's netem delay does where the kernel has it).
type Link struct {
	addr, target string

	delay atomic.Int64 // nanoseconds added to each chunk forwarded, each way

	mu    sync.Mutex
	ln    net.Listener // nil while refusing
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

func newLink(addr, target string) (*Link, error) {
	l := &Link{addr: addr, target: target, conns: map[net.Conn]struct{}{}}
	if err := l.listen(); err != nil {
		return nil, err
	}
	return l, nil
}

// SetDelay delays every chunk the link forwards, each way, by d (0: none).
func (l *Link) SetDelay(d time.Duration) { l.delay.Store(int64(d)) }

// Refuse closes the node's port (connections are refused) and cuts the open connections, or
// opens it again.
func (l *Link) Refuse(refuse bool) error {
	if !refuse {
		return l.listen()
	}
	l.mu.Lock()
	ln := l.ln
	l.ln = nil
	for c := range l.conns {
		c.Close()
	}
	l.mu.Unlock()
	if ln != nil {
		ln.Close()
	}
	return nil
}

func (l *Link) listen() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ln != nil {
		return nil
	}
	var ln net.Listener
	var err error
	// The port was just closed: the kernel may take a moment to let it be bound again.
	for range 50 {
		if ln, err = net.Listen("tcp", l.addr); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("localcluster: link %s: %w", l.addr, err)
	}
	l.ln = ln
	l.wg.Add(1)
	go l.serve(ln)
	return nil
}

func (l *Link) close() {
	l.Refuse(true)
	l.wg.Wait()
}

func (l *Link) serve(ln net.Listener) {
	defer l.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go l.relay(c)
	}
}

func (l *Link) track(c net.Conn, on bool) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if on && l.ln == nil {
		return false // refused meanwhile
	}
	if on {
		l.conns[c] = struct{}{}
	} else {
		delete(l.conns, c)
	}
	return true
}

func (l *Link) relay(client net.Conn) {
	defer client.Close()
	backend, err := net.DialTimeout("tcp", l.target, 2*time.Second)
	if err != nil {
		return
	}
	defer backend.Close()
	if !l.track(client, true) || !l.track(backend, true) {
		return
	}
	defer l.track(client, false)
	defer l.track(backend, false)
	relayBoth(client, backend, l.copyDelayed)
}

// copyDelayed copies src to dst a chunk at a time, each held back by the link's delay; a read
// error other than EOF (the link cut) closes dst.
func (l *Link) copyDelayed(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if d := time.Duration(l.delay.Load()); d > 0 {
				time.Sleep(d)
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				dst.Close()
			}
			return
		}
	}
}
