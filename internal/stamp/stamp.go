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

// Package stamp writes times into log values and messages one way, whatever the log encoder or
// the local time zone would make of a time.Time: UTC in RFC 3339.
package stamp

import "time"

// Seconds is t for a message a person reads (a decision's, an admission error's): whole seconds.
func Seconds(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// Nano is t for a log line that times one step of a restart against the others: nanoseconds.
func Nano(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
