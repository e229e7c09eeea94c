package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A bundle whose metadata lacks a label OLM needs is refused, naming the label.
func TestBundleFilesRejectsIncompleteMetadata(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "metadata"), 0o755); err != nil {
		t.Fatal(err)
	}
	ann := "annotations:\n  operators.operatorframework.io.bundle.mediatype.v1: registry+v1\n"
	if err := os.WriteFile(filepath.Join(dir, "metadata", "annotations.yaml"), []byte(ann), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := bundleFiles(dir)
	if err == nil || !strings.Contains(err.Error(), "manifests.v1") {
		t.Fatalf("err = %v, want one naming the missing manifests annotation", err)
	}
}
