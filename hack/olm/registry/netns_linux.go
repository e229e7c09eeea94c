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

package main

import (
	"fmt"
	"net"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// listenIn listens on addr in the network namespace whose file is nsPath (a further node of the
// local cluster: its containerd pulls from its own loopback). A socket belongs to the namespace of
// the thread that creates it, so one thread enters the namespace, listens and comes back; if it
// cannot come back it is never unlocked, and the runtime ends it with its goroutine.
func listenIn(nsPath, addr string) (net.Listener, error) {
	type result struct {
		ln  net.Listener
		err error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		ln, err, restored := listenOnThread(nsPath, addr)
		if restored {
			runtime.UnlockOSThread()
		}
		done <- result{ln, err}
	}()
	r := <-done
	return r.ln, r.err
}

func listenOnThread(nsPath, addr string) (ln net.Listener, err error, restored bool) {
	own, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		return nil, err, true
	}
	defer func() { _ = own.Close() }()
	target, err := os.Open(nsPath)
	if err != nil {
		return nil, fmt.Errorf("-netns %s: %w", nsPath, err), true
	}
	defer func() { _ = target.Close() }()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		return nil, fmt.Errorf("-netns %s: entering it: %w", nsPath, err), true
	}
	ln, err = net.Listen("tcp", addr)
	if serr := unix.Setns(int(own.Fd()), unix.CLONE_NEWNET); serr != nil {
		if ln != nil {
			_ = ln.Close()
		}
		return nil, fmt.Errorf("-netns %s: coming back to the host's namespace: %w", nsPath, serr), false
	}
	if err != nil {
		return nil, fmt.Errorf("-netns %s: %w", nsPath, err), true
	}
	return ln, nil, true
}
