package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairn-store/cairn/internal/advisor"
	"github.com/cairn-store/cairn/internal/advisor/validate"
)

// Inputs validate refuses before it touches the machine (so these run without root).
func TestAdvisorValidateRefuses(t *testing.T) {
	cat := filepath.Join(t.TempDir(), "catalog.yaml")
	if err := os.WriteFile(cat, advisor.ExampleCatalog(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		f    validateFlags
	}{
		{"bad sweep", validateFlags{sweep: "1:N=4..1", size: "4KiB"}},
		{"unknown node type", validateFlags{sweep: "1:N=1..2", size: "4KiB", catalog: cat, proxyType: "nope", storageType: "storage-1u-4"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			f := tc.f
			f.shape = validate.Shape{Replicas: 3, Proxy: validate.Node{CPU: 0.4, NICMbps: 100}, StorNode: validate.Node{CPU: 0.2, NICMbps: 100}}
			err := runValidate(&out, &errOut, &validate.Config{Dir: filepath.Join(t.TempDir(), "v")}, &f)
			if !errors.Is(err, validate.ErrInvalidConfig) {
				t.Fatalf("got %v, want ErrInvalidConfig", err)
			}
		})
	}
}
