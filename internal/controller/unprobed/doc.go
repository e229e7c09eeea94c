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

// Package unprobed watches for enrolled pods no node daemon probes: they have no liveness at all.
//
// A leader-only runnable lists the enrolled pods from the cache every interval, asks the decision's
// facts builder which of their containers are not probed and why, sets the
// enhanced_liveness_unprobed_containers and enhanced_liveness_enrolled_pods gauges, and writes a
// LivenessNotProbed Warning event on each such pod once it lasted a grace period, then every
// rules.HoldEventInterval while it lasts. It writes nothing else.
package unprobed
