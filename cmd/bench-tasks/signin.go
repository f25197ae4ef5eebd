package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/backtestd/backtestd/internal/procstat"
)

// signin sends bursts of n sign-ins at once to a service with accounts on and reports the
// status codes and the API process's resident memory (sampled every 5 ms, and its VmHWM):
//
//	one name      n wrong passwords for name from this client's address
//	many clients  n sign-ins for n unknown names, each from an address of its own
//	              (127.0.0.2, 127.0.0.3, …: a service on a loopback address sees n clients)
//	long names    n sign-ins with 60 KB names
//
// pid is the API process (0: memory is not read).
func (b *bench) signin(n, pid int, name string) error {
	u, err := url.Parse(b.api)
	if err != nil {
		return err
	}
	loopback := false
	if ip := net.ParseIP(u.Hostname()); ip != nil && ip.IsLoopback() && ip.To4() != nil {
		loopback = true
	}
	fmt.Printf("signin: %d sign-ins at once, API process %d\n", n, pid)
	if pid > 0 {
		rss, _ := procstat.RSS(pid)
		fmt.Printf("  before: rss %.1f MB, peak so far (VmHWM) %.1f MB\n", float64(rss)/1e6, float64(vmHWM(pid))/1e6)
	}
	bursts := []struct {
		what   string
		client func(i int) *http.Client
		body   func(i int) string
	}{
		{"one name, one address", func(int) *http.Client { return b.client }, func(int) string { return loginJSON(name, "wrong-password") }},
		{"many clients", func(i int) *http.Client {
			if !loopback {
				return b.client
			}
			return clientFrom(net.IPv4(127, 0, byte(i/250), byte(2+i%250)))
		}, func(i int) string { return loginJSON(fmt.Sprintf("bench-nobody-%d", i), "wrong-password") }},
		{"60 KB names", func(int) *http.Client { return b.client }, func(i int) string {
			return loginJSON(strings.Repeat("n", 60<<10)+strconv.Itoa(i), "wrong-password")
		}},
	}
	if !loopback {
		fmt.Println("  (the service is not on an IPv4 loopback address: every burst comes from one address)")
	}
	for _, burst := range bursts {
		codes, peak, took, err := b.signinBurst(n, pid, burst.client, burst.body)
		if err != nil {
			return fmt.Errorf("%s: %w", burst.what, err)
		}
		var parts []string
		for _, c := range slices.Sorted(maps.Keys(codes)) {
			parts = append(parts, fmt.Sprintf("%d × %d", codes[c], c))
		}
		line := fmt.Sprintf("  %-22s %s in %s", burst.what+":", strings.Join(parts, ", "), took.Round(time.Millisecond))
		if pid > 0 {
			line += fmt.Sprintf("; peak rss %.1f MB (VmHWM %.1f MB)", float64(peak)/1e6, float64(vmHWM(pid))/1e6)
		}
		fmt.Println(line)
	}
	return nil
}

func loginJSON(name, password string) string {
	j, _ := json.Marshal(map[string]string{"name": name, "password": password})
	return string(j)
}

// clientFrom is an HTTP client whose connections leave from local address ip.
func clientFrom(ip net.IP) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: ip}, Timeout: 10 * time.Second}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}
}

// signinBurst sends n sign-ins released at once and samples pid's resident memory until
// all are answered.
func (b *bench) signinBurst(n, pid int, client func(int) *http.Client, body func(int) string) (map[int]int, uint64, time.Duration, error) {
	ctx, stop := context.WithCancel(context.Background())
	var peak uint64
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			if pid > 0 {
				if rss, err := procstat.RSS(pid); err == nil {
					peak = max(peak, rss)
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	codes := map[int]int{}
	var mu sync.Mutex
	var firstErr error
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		c, data := client(i), body(i)
		wg.Go(func() {
			<-start
			req, _ := http.NewRequest("POST", b.api+"/api/auth/login", bytes.NewReader([]byte(data)))
			req.Header.Set("Content-Type", "application/json")
			resp, err := c.Do(req)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if firstErr == nil {
					firstErr = err
				}
				codes[0]++
				return
			}
			resp.Body.Close()
			codes[resp.StatusCode]++
		})
	}
	t0 := time.Now()
	close(start)
	wg.Wait()
	took := time.Since(t0)
	time.Sleep(50 * time.Millisecond) // memory may peak as the last answers are written
	stop()
	<-sampled
	if codes[0] > 0 {
		fmt.Printf("  %d requests failed, the first: %v\n", codes[0], firstErr)
	}
	return codes, peak, took, nil
}

// vmHWM is process pid's peak resident memory in bytes (0 if unknown).
func vmHWM(pid int) uint64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb * 1024
		}
	}
	return 0
}
