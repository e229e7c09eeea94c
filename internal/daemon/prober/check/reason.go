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

package check

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"
)

// Outcome is the result of one probe run and what to say about it, in two forms: Message is
// what the kubelet says (the command's output, a gRPC server's own words), for the pod's own
// namespace only, as a Warning event; Reason is a short summary made of the check's own words
// and numbers (an exit code, a status code, a timeout, a connection error) that never carries
// anything the application wrote, for the cluster-scoped NodePodProbeReport.
type Outcome struct {
	Result  Result
	Message string
	Reason  string
}

// errTooManyRedirects stops an HTTP probe after maxRedirects same-host redirects.
var errTooManyRedirects = errors.New("stopped after 10 redirects")

// errorReason summarises a dial or request error without its text, which can quote what the
// server sent (a malformed response, a redirect target, a gRPC status message).
func errorReason(err error, timeout time.Duration) string {
	var (
		netErr  net.Error
		dnsErr  *net.DNSError
		certErr *tls.CertificateVerificationError
		hdrErr  tls.RecordHeaderError
		alert   tls.AlertError
		unknown x509.UnknownAuthorityError
	)
	switch {
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout()):
		return timeoutReason(timeout)
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset by peer"
	case errors.Is(err, syscall.EHOSTUNREACH):
		return "no route to host"
	case errors.Is(err, syscall.ENETUNREACH):
		return "network is unreachable"
	case errors.As(err, &dnsErr):
		return "host not found"
	case errors.Is(err, errTooManyRedirects):
		return "stopped after 10 redirects"
	case errors.As(err, &certErr), errors.As(err, &hdrErr), errors.As(err, &alert), errors.As(err, &unknown):
		return "TLS handshake failed"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection closed by the server"
	default:
		return "request failed"
	}
}

func timeoutReason(timeout time.Duration) string { return fmt.Sprintf("timeout after %v", timeout) }
