// Command embedded-db runs FerretDB 1.x (a MongoDB wire-compatible database) on its SQLite
// backend for the gateway's embedded mode and its tests.
//
// It embeds the package github.com/FerretDB/FerretDB/ferretdb rather than building
// cmd/ferretdb, because the latter panics at start when built from the module proxy (the
// module lacks build/version/version.txt; FerretDB issue 2982). In embedded mode telemetry
// is off and no debug listener is started.
//
// It listens on a free loopback port, prints one JSON line {"uri": "..."} on stdout once it
// accepts connections, and exits when its standard input closes (the Node process that
// started it died or let go of it), on SIGINT or SIGTERM.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	dataDir := flag.String("data-dir", "", "directory for the SQLite files (required)")
	listen := flag.String("listen", "127.0.0.1:0", "TCP address to listen on")
	logLevel := flag.String("log-level", "error", "debug, info, warn or error")
	scalarFields := flag.String("scalar-fields", "",
		"JSON {collection: {field: type}}: the fields the store declares scalar (string, date, "+
			"number or bool) or terms (an array of strings), whose queries run whole in SQL, served by indexes (README.md)")
	cpuProfile := flag.String("cpu-profile", "",
		"write a Go CPU profile of the whole run to this file (for `go tool pprof`)")
	flag.Parse()

	if *dataDir == "" {
		fail("--data-dir is required")
	}
	abs, err := filepath.Abs(*dataDir)
	if err != nil {
		fail(err.Error())
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		fail(err.Error())
	}

	// Checked and handed to the backend before it starts, so a bad one fails here.
	if err := ferretdb.DeclareScalarFields(*scalarFields); err != nil {
		fail(err.Error())
	}

	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		fail("bad --log-level: " + err.Error())
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	f, err := ferretdb.New(&ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: *listen},
		Logger:    logger,
		Handler:   "sqlite",
		SQLiteURL: "file:" + abs + "/?_pragma=mmap_size(1073741824)",
	})
	if err != nil {
		fail(err.Error())
	}

	if *cpuProfile != "" {
		out, err := os.Create(*cpuProfile)
		if err != nil {
			fail(err.Error())
		}
		if err := pprof.StartCPUProfile(out); err != nil {
			fail(err.Error())
		}
		defer func() {
			pprof.StopCPUProfile()
			_ = out.Close()
		}()
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	// The parent holds our stdin open for as long as it wants us; EOF means it is gone.
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		cancel()
	}()

	done := make(chan struct{})
	go func() {
		_ = f.Run(ctx)
		close(done)
	}()

	uri := f.MongoDBURI()
	if err := waitForPort(uri, ctx); err != nil {
		fail(err.Error())
	}
	line, _ := json.Marshal(map[string]any{"uri": uri, "pid": os.Getpid()})
	fmt.Println(string(line))

	<-done
}

// waitForPort returns once the listener accepts TCP connections.
func waitForPort(uri string, ctx context.Context) error {
	host := uri
	// uri looks like mongodb://127.0.0.1:PORT/
	if len(host) > len("mongodb://") {
		host = host[len("mongodb://"):]
	}
	if i := len(host) - 1; i >= 0 && host[i] == '/' {
		host = host[:i]
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		c, err := net.DialTimeout("tcp", host, 500*time.Millisecond)
		if err == nil {
			_ = c.Close()
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("FerretDB did not accept connections on %s within 30s", host)
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "embedded-db:", msg)
	os.Exit(1)
}
