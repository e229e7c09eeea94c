package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"
)

// bundleLabels are the labels OLM and opm need on a bundle image; they come from the bundle's
// metadata/annotations.yaml, as bundle.Dockerfile's LABEL lines do.
var bundleLabels = []string{
	"operators.operatorframework.io.bundle.mediatype.v1",
	"operators.operatorframework.io.bundle.manifests.v1",
	"operators.operatorframework.io.bundle.metadata.v1",
	"operators.operatorframework.io.bundle.package.v1",
	"operators.operatorframework.io.bundle.channels.v1",
}

// bundleFiles reads an OLM bundle directory as bundle.Dockerfile copies it: manifests/,
// metadata/ and tests/scorecard/ (when present) at the image root; and its annotations, which
// become the image's labels.
func bundleFiles(dir string) ([]file, map[string]string, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "metadata", "annotations.yaml"))
	if err != nil {
		return nil, nil, fmt.Errorf("bundle %s: %w", dir, err)
	}
	var meta struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := yaml.UnmarshalStrict(raw, &meta); err != nil {
		return nil, nil, fmt.Errorf("bundle %s: metadata/annotations.yaml: %w", dir, err)
	}
	for _, k := range bundleLabels {
		if meta.Annotations[k] == "" {
			return nil, nil, fmt.Errorf("bundle %s: metadata/annotations.yaml has no %s", dir, k)
		}
	}
	var files []file
	for _, sub := range []string{"manifests", "metadata", filepath.Join("tests", "scorecard")} {
		root := filepath.Join(dir, sub)
		if _, err := os.Stat(root); os.IsNotExist(err) && sub != "manifests" && sub != "metadata" {
			continue
		}
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(dir, p)
			if err != nil {
				return err
			}
			rel = filepath.ToSlash(rel)
			switch {
			case d.IsDir():
				files = append(files, file{name: rel, mode: 0o755, dir: true})
			case d.Type().IsRegular():
				b, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				files = append(files, file{name: rel, mode: 0o644, data: b})
			default:
				return fmt.Errorf("%s: not a regular file or directory", p)
			}
			return nil
		})
		if err != nil {
			return nil, nil, fmt.Errorf("bundle %s: %w", dir, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "tests", "scorecard")); err == nil {
		files = append(files, file{name: "tests", mode: 0o755, dir: true})
	}
	return files, meta.Annotations, nil
}
