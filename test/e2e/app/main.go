// Command app is the end-to-end test application. It serves the four kinds of liveness check the
// operator runs and lets a test switch its health at run time:
//
//	HTTP  :8080/healthz     200 when healthy, 500 when sick
//	TCP   :8081             accepts connections when healthy, the listener is closed when sick
//	gRPC  :8082             grpc.health.v1 SERVING / NOT_SERVING
//	exec  /app check [-sleep D] [-sick-on-node N]   sleeps D, then exits 0 when healthy, 1 when
//	      sick (or, with -sick-on-node, when the environment's NODE_NAME is N: a node-local failure)
//
// Health is a file (default /tmp/sick: present = sick), so it can be switched with
// `kubectl exec POD -- /app sick|healthy` or through the admin endpoints on the HTTP port
// (POST /admin/sick, POST /admin/healthy). A restarted container starts with a fresh /tmp, so it
// is healthy again: a stuck process, which a restart cures.
//
// A failed dependency is what a restart does not cure: with DEPENDENCY_FILE set (put it on an
// emptyDir, which outlives the container), the file's presence makes every check fail until it is
// removed. Switched with POST /admin/dependency-down and /admin/dependency-up, or
// `/app dependency-down|dependency-up`. Every failed HTTP probe and every start is logged with a Unix-nanosecond
// timestamp ("FAILED-PROBE kind=http at=N", "STARTED at=N") so tests can measure restart latency.
//
// GET /admin/state reports the health switches and, for the last /healthz request and the last
// connection to the TCP check port, the local address the client had dialled and how many came:
// which address a prober dials (a host-network pod's is its node's) is seen from the app's side.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// dependencyFile is DEPENDENCY_FILE, set once at start: present = the app's dependency is down.
var dependencyFile string

// The commands (and admin paths) that take the dependency down and bring it back.
const (
	cmdDependencyDown = "dependency-down"
	cmdDependencyUp   = "dependency-up"
)

func main() {
	healthFile := envOr("HEALTH_FILE", "/tmp/sick")
	dependencyFile = os.Getenv("DEPENDENCY_FILE")
	if len(os.Args) > 1 {
		os.Exit(subcommand(os.Args[1], os.Args[2:], healthFile))
	}
	fmt.Printf("STARTED at=%d\n", time.Now().UnixNano())
	err := serve(healthFile, envOr("HTTP_PORT", "8080"), envOr("TCP_PORT", "8081"), envOr("GRPC_PORT", "8082"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "app:", err)
		os.Exit(1)
	}
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func isSick(healthFile string) bool {
	return exists(healthFile) || (dependencyFile != "" && exists(dependencyFile))
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// switchFile creates (on) or removes (off) a switch file.
func switchFile(path string, on bool) error {
	if path == "" {
		return errors.New("no file configured (DEPENDENCY_FILE is not set)")
	}
	if on {
		return os.WriteFile(path, []byte("down\n"), 0o644)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// subcommand runs the exec-probe check and the health switches.
func subcommand(name string, args []string, healthFile string) int {
	switch name {
	case "check":
		fs := flag.NewFlagSet("check", flag.ContinueOnError)
		sleep := fs.Duration("sleep", 0, "sleep this long before answering (to exceed a probe timeout)")
		sickOn := fs.String("sick-on-node", "", "fail when NODE_NAME (the downward API's spec.nodeName) is this node")
		if err := fs.Parse(args); err != nil {
			return 2
		}
		time.Sleep(*sleep)
		if *sickOn != "" && os.Getenv("NODE_NAME") == *sickOn {
			fmt.Println("sick on node", *sickOn)
			return 1
		}
		if isSick(healthFile) {
			fmt.Println("sick")
			return 1
		}
		fmt.Println("ok")
		return 0
	case "sick":
		if err := os.WriteFile(healthFile, []byte("sick\n"), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	case "healthy":
		if err := switchFile(healthFile, false); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	case cmdDependencyDown, cmdDependencyUp:
		if err := switchFile(dependencyFile, name == cmdDependencyDown); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	default:
		fmt.Fprintln(os.Stderr, "usage: app [check [-sleep D] | sick | healthy | dependency-down | dependency-up]")
		return 2
	}
}

// handlers serves the HTTP probe (/healthz, recording where each arrived) and the /admin/ switches
// the specs drive the app with.
func handlers(healthFile string, seen *dialled) *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
			seen.http.record(a)
		}
		if isSick(healthFile) {
			fmt.Printf("FAILED-PROBE kind=http at=%d ua=%q\n", time.Now().UnixNano(), r.UserAgent())
			http.Error(w, "sick", http.StatusInternalServerError)
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
	mux.HandleFunc("/admin/sick", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "POST only", http.StatusMethodNotAllowed)
			return
		}
		if subcommand("sick", nil, healthFile) != 0 {
			http.Error(w, "cannot write health file", http.StatusInternalServerError)
			return
		}
		fmt.Printf("SWITCHED sick at=%d\n", time.Now().UnixNano())
		_, _ = w.Write([]byte("sick"))
	})
	mux.HandleFunc("/admin/healthy", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "POST only", http.StatusMethodNotAllowed)
			return
		}
		if subcommand("healthy", nil, healthFile) != 0 {
			http.Error(w, "cannot remove health file", http.StatusInternalServerError)
			return
		}
		fmt.Printf("SWITCHED healthy at=%d\n", time.Now().UnixNano())
		_, _ = w.Write([]byte("healthy"))
	})
	for _, name := range []string{cmdDependencyDown, cmdDependencyUp} {
		mux.HandleFunc("/admin/"+name, func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodPost {
				http.Error(w, "POST only", http.StatusMethodNotAllowed)
				return
			}
			if err := switchFile(dependencyFile, name == cmdDependencyDown); err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			fmt.Printf("SWITCHED %s at=%d\n", name, time.Now().UnixNano())
			_, _ = w.Write([]byte(name))
		})
	}
	mux.HandleFunc("/admin/state", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(state{
			Sick: isSick(healthFile), DependencyDown: dependencyFile != "" && exists(dependencyFile),
			HTTPProbes: seen.http.get(), TCPChecks: seen.tcp.get(),
		})
	})
	return mux
}

func serve(healthFile, httpPort, tcpPort, grpcPort string) error {
	seen := &dialled{}
	mux := handlers(healthFile, seen)

	hs := health.NewServer()
	gs := grpc.NewServer()
	healthpb.RegisterHealthServer(gs, hs)
	gl, err := net.Listen("tcp", ":"+grpcPort)
	if err != nil {
		return err
	}
	hl, err := net.Listen("tcp", ":"+httpPort)
	if err != nil {
		return err
	}
	errs := make(chan error, 2)
	go func() { errs <- gs.Serve(gl) }()
	go func() { errs <- (&http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}).Serve(hl) }()

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	tcp := &tcpCheck{port: tcpPort, seen: &seen.tcp}
	go watchHealth(ctx, healthFile, hs, tcp)
	select {
	case <-ctx.Done():
		fmt.Printf("TERMINATED at=%d\n", time.Now().UnixNano())
		return nil
	case err := <-errs:
		return err
	}
}

// watchHealth follows the health file and applies it to the gRPC status and the TCP listener.
func watchHealth(ctx context.Context, healthFile string, hs *health.Server, tcp *tcpCheck) {
	first := true
	last := false
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		sick := isSick(healthFile)
		if first || sick != last {
			status := healthpb.HealthCheckResponse_SERVING
			if sick {
				status = healthpb.HealthCheckResponse_NOT_SERVING
			}
			hs.SetServingStatus("", status)
			if err := tcp.set(!sick); err != nil {
				fmt.Fprintln(os.Stderr, "tcp:", err)
			}
			first, last = false, sick
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// state is what GET /admin/state answers.
type state struct {
	Sick           bool     `json:"sick"`
	DependencyDown bool     `json:"dependencyDown"`
	HTTPProbes     arrivals `json:"httpProbes"`
	TCPChecks      arrivals `json:"tcpChecks"`
}

// arrivals counts the requests (or connections) of one check and keeps the local address the
// last one was sent to: the address its client dialled.
type arrivals struct {
	Count    int64  `json:"count"`
	LastAddr string `json:"lastAddr,omitempty"`
}

type arrivalsLog struct {
	mu sync.Mutex
	a  arrivals
}

func (l *arrivalsLog) record(local net.Addr) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.a.Count++
	l.a.LastAddr = local.String()
}

func (l *arrivalsLog) get() arrivals {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.a
}

// dialled: the arrivals at /healthz and at the TCP check port.
type dialled struct{ http, tcp arrivalsLog }

// tcpCheck opens the TCP check port when healthy and closes it when sick, so a TCP probe sees
// "connection refused".
type tcpCheck struct {
	port string
	seen *arrivalsLog
	mu   sync.Mutex
	ln   net.Listener
}

func (c *tcpCheck) set(open bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !open {
		if c.ln != nil {
			err := c.ln.Close()
			c.ln = nil
			return err
		}
		return nil
	}
	if c.ln != nil {
		return nil
	}
	ln, err := net.Listen("tcp", ":"+c.port)
	if err != nil {
		return err
	}
	c.ln = ln
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			c.seen.record(conn.LocalAddr())
			_ = conn.Close()
		}
	}()
	return nil
}
