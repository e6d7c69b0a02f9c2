package server

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-store/cairn/internal/ring"
)

// A storage node serves the devices of every policy's object ring, and refuses to start when two
// policies' object rings name one of its devices, or a policy has no ring.
func TestStorageNodePolicyDevices(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	const policies = "[storage-policy:0]\nname = gold\ndefault = yes\n[storage-policy:1]\nname = silver\n"
	for _, tc := range []struct {
		name    string
		rings   map[string]string // ring → its one device on this node
		conf    string
		wantErr string
		devices []string
	}{
		{"a device for each policy", map[string]string{"account": "d1", "container": "d1", "object": "d1", "object-1": "p1"}, policies, "", []string{"d1", "p1"}},
		{"one device in two policies", map[string]string{"account": "d1", "container": "d1", "object": "d1", "object-1": "d1"}, policies,
			"device d1 of " + addr + " is in the object rings of storage policy 0 (gold) (object.ring.gz) and of storage policy 1 (silver) (object-1.ring.gz)", nil},
		{"a policy without a ring", map[string]string{"account": "d1", "container": "d1", "object": "d1"}, policies, "object ring of storage policy 1 (silver)", nil},
		{"an object ring without a policy is not served", map[string]string{"account": "d1", "container": "d1", "object": "d1", "object-1": "p1"}, "", "", []string{"d1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, data := t.TempDir(), t.TempDir()
			for name, dev := range tc.rings {
				if err := ring.WriteFile(filepath.Join(dir, name+".ring.gz"), ring.SingleDevice(addr, dev, 4, "")); err != nil {
					t.Fatal(err)
				}
			}
			if tc.conf != "" {
				if err := os.WriteFile(filepath.Join(dir, "swift.conf"), []byte(tc.conf), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			s, err := Start(Config{Role: RoleStorage, RingDir: dir, DataDir: data, Listen: addr, ClusterSecret: testClusterSecret, SweepInterval: -1})
			if tc.wantErr != "" {
				if err == nil {
					s.closeParts()
					s.listener.Close()
					t.Fatal("started")
				}
				if !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to say %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			s.closeParts()
			s.listener.Close()
			entries, err := os.ReadDir(filepath.Join(data, "devices"))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range entries {
				got = append(got, e.Name())
			}
			if strings.Join(got, ",") != strings.Join(tc.devices, ",") {
				t.Fatalf("devices %v, want %v", got, tc.devices)
			}
		})
	}
}

// A storage node with a device in an erasure-coded policy's ring runs a reconstructor for it
// (reported in its status), and its replicator leaves that device alone: it must not take it
// for a device no ring names and send its archives to policy 0's primaries.
func TestStorageNodeErasureCodedDevices(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	dir, data := t.TempDir(), t.TempDir()
	for name, dev := range map[string]string{"account": "d1", "container": "d1", "object": "d1", "object-1": "ec1"} {
		if err := ring.WriteFile(filepath.Join(dir, name+".ring.gz"), ring.SingleDevice(addr, dev, 4, "")); err != nil {
			t.Fatal(err)
		}
	}
	conf := "[storage-policy:0]\nname = gold\ndefault = yes\n[storage-policy:1]\nname = ec\npolicy_type = erasure_coding\n" +
		"ec_type = cairn_rs\nec_num_data_fragments = 2\nec_num_parity_fragments = 1\n"
	if err := os.WriteFile(filepath.Join(dir, "swift.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Start(Config{Role: RoleStorage, RingDir: dir, DataDir: data, Listen: addr, ClusterSecret: testClusterSecret, SweepInterval: -1, ReplicationInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		s.closeParts()
		s.listener.Close()
	}()
	if s.reconstructor == nil {
		t.Fatal("no reconstructor")
	}
	if got := (replicatedDevices{Node: s.node, ec: s.ecDevices}).Devices(); strings.Join(got, ",") != "d1" {
		t.Fatalf("the replicator sees devices %v, want d1 alone", got)
	}
	if rings := s.ecRings(); len(rings) != 1 || rings[0].Scheme.K != 2 || rings[0].Scheme.M != 1 {
		t.Fatalf("erasure-coded rings %+v", rings)
	}
	st, err := s.node.NodeStatus(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := st.Daemons["reconstructor"]; !ok {
		t.Fatalf("status without the reconstructor: %+v", st.Daemons)
	}
}
