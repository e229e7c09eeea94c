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

// Package restarthold keeps the RestartHold records of the decision's holds, so that a manager
// restart or a leader change goes on where a hold was (its onset, its wait, its canary).
//
// The decision's memory is the truth while this manager leads. Records watches nothing: the
// memory tells it which keys changed (Notify), and it writes each record once per change through
// its controller's queue, or at once for a canary before its restart (WriteNow). Load reads the
// records back into the memory when this manager starts leading, before its first decision. An
// admission policy keeps the records the manager's alone.
package restarthold
