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

package flagusage

import (
	"bytes"
	"flag"
	"testing"
	"time"
)

// What the flag package prints is read back: names, types, defaults and usage.
func TestParseReadsPrintDefaults(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.Bool("leader-elect", false, "Enable leader election.")
	fs.Bool("secure", true, "Serve securely.")
	fs.String("cert-mode", "self", "Who provides the `certificate`: self or olm.")
	fs.String("empty", "", "No default.\nSecond line.")
	fs.Int("workers", 8, "Workers.")
	fs.Duration("hold", 10*time.Minute, "How long.")
	fs.Float64("qps", 200, "Queries per second.")
	fs.String("v", "", "One letter.")
	var buf bytes.Buffer
	fs.SetOutput(&buf)
	fs.PrintDefaults()
	got, err := Parse(buf.String())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Flag{
		"leader-elect": {Name: "leader-elect", Type: "", Usage: "Enable leader election."},
		"secure":       {Name: "secure", Type: "", Default: "true", Usage: "Serve securely."},
		"cert-mode":    {Name: "cert-mode", Type: "certificate", Default: `"self"`, Usage: "Who provides the certificate: self or olm."},
		"empty":        {Name: "empty", Type: "string", Usage: "No default. Second line."},
		"workers":      {Name: "workers", Type: "int", Default: "8", Usage: "Workers."},
		"hold":         {Name: "hold", Type: "duration", Default: "10m0s", Usage: "How long."},
		"qps":          {Name: "qps", Type: "float", Default: "200", Usage: "Queries per second."},
		"v":            {Name: "v", Type: "string", Usage: "One letter."},
	}
	if len(got) != len(want) {
		t.Errorf("%d flags, want %d: %v", len(got), len(want), got)
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s = %+v, want %+v", name, got[name], w)
		}
	}
	if d := got["leader-elect"].DefaultOrZero(); d != "false" {
		t.Errorf("DefaultOrZero of a bool without default = %q, want false", d)
	}
}

func TestParseRefusesAnEmptyUsage(t *testing.T) {
	if _, err := Parse("Usage of x:\n"); err == nil {
		t.Error("want an error for a usage without flags")
	}
}
