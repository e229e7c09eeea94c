/*
Copyright 2026 The enhanced-liveness-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package certs

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// onDisk returns the files in dir by name, and fails on anything but tls.crt and tls.key
// (a temporary file left behind, say).
func onDisk(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, e := range entries {
		if e.Name() != CertFile && e.Name() != KeyFile {
			t.Errorf("unexpected file %s in the certificate directory", e.Name())
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = string(b)
	}
	return files
}

func TestWriteKeyPair(t *testing.T) {
	cases := []struct {
		name       string
		before     map[string]string // files present before the write
		cert, key  string
		wantWrite  bool
		wantOnDisk map[string]string
	}{
		{name: "first certificate", cert: "C1", key: "K1", wantWrite: true,
			wantOnDisk: map[string]string{CertFile: "C1", KeyFile: "K1"}},
		{name: "unchanged", before: map[string]string{CertFile: "C1", KeyFile: "K1"}, cert: "C1", key: "K1",
			wantOnDisk: map[string]string{CertFile: "C1", KeyFile: "K1"}},
		{name: "rotated", before: map[string]string{CertFile: "C1", KeyFile: "K1"}, cert: "C2", key: "K2",
			wantWrite: true, wantOnDisk: map[string]string{CertFile: "C2", KeyFile: "K2"}},
		{name: "only the certificate changed", before: map[string]string{CertFile: "C1", KeyFile: "K1"},
			cert: "C2", key: "K1", wantWrite: true, wantOnDisk: map[string]string{CertFile: "C2", KeyFile: "K1"}},
		{name: "empty Secret (not issued yet)", wantOnDisk: map[string]string{}},
		{name: "key missing", cert: "C1", wantOnDisk: map[string]string{}},
		{name: "certificate missing", key: "K1", wantOnDisk: map[string]string{}},
		{name: "key missing keeps the previous pair", before: map[string]string{CertFile: "C1", KeyFile: "K1"},
			cert: "C2", wantOnDisk: map[string]string{CertFile: "C1", KeyFile: "K1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for n, v := range tc.before {
				if err := os.WriteFile(filepath.Join(dir, n), []byte(v), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			got, err := writeKeyPair(dir, []byte(tc.cert), []byte(tc.key))
			if err != nil {
				t.Fatalf("writeKeyPair: %v", err)
			}
			if got != tc.wantWrite {
				t.Errorf("written = %v, want %v", got, tc.wantWrite)
			}
			files := onDisk(t, dir)
			if len(files) != len(tc.wantOnDisk) {
				t.Errorf("files = %v, want %v", files, tc.wantOnDisk)
			}
			for n, v := range tc.wantOnDisk {
				if files[n] != v {
					t.Errorf("%s = %q, want %q", n, files[n], v)
				}
			}
		})
	}
}

// Only a changed file is replaced: an unchanged one keeps its inode, so the webhook server's
// file watch sees no event for it.
func TestWriteKeyPairLeavesUnchangedFilesAlone(t *testing.T) {
	dir := t.TempDir()
	if _, err := writeKeyPair(dir, []byte("C1"), []byte("K1")); err != nil {
		t.Fatal(err)
	}
	stat := func(n string) os.FileInfo {
		fi, err := os.Stat(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		return fi
	}
	key, cert := stat(KeyFile), stat(CertFile)
	if _, err := writeKeyPair(dir, []byte("C2"), []byte("K1")); err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(key, stat(KeyFile)) {
		t.Error("the unchanged key was rewritten")
	}
	if os.SameFile(cert, stat(CertFile)) {
		t.Error("the changed certificate was not replaced by a new file")
	}
}

func TestWriteKeyPairModes(t *testing.T) {
	dir := t.TempDir()
	if _, err := writeKeyPair(dir, []byte("C1"), []byte("K1")); err != nil {
		t.Fatal(err)
	}
	for n, want := range map[string]os.FileMode{KeyFile: 0o600, CertFile: 0o644} {
		fi, err := os.Stat(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s mode = %v, want %v", n, got, want)
		}
	}
}

// Failures name the file. Root (as in CI) may write into a read-only directory, so the failures
// here come from the directory's shape instead of its permissions.
func TestWriteKeyPairErrors(t *testing.T) {
	t.Run("directory missing", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "absent")
		_, err := writeKeyPair(dir, []byte("C1"), []byte("K1"))
		if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, KeyFile)) {
			t.Fatalf("error = %v, want one naming %s", err, filepath.Join(dir, KeyFile))
		}
	})
	t.Run("certificate path is a directory", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, CertFile, "x"), 0o755); err != nil {
			t.Fatal(err)
		}
		_, err := writeKeyPair(dir, []byte("C1"), []byte("K1"))
		if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, CertFile)) {
			t.Fatalf("error = %v, want one naming %s", err, filepath.Join(dir, CertFile))
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		if want := []string{CertFile, KeyFile}; !slices.Equal(names, want) {
			t.Errorf("directory holds %v, want %v", names, want)
		}
	})
}
