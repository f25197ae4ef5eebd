package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"time"
)

// studyRange is the part of the study's CSV the service and backtrader both run on:
// 2,515 daily bars of ../shared/reference/data/orcl.csv.
const studyFrom, studyTo = "2000-01-01", "2009-12-31"

// study times a 1,000-combination SMA-crossover study (fast 2..51, slow 60..250 by 10) on
// the service, from POST /api/studies to every combination stored, and, when bt names
// backtrader's source, backtrader's optstrategy on the same grid, bars and cash in the same
// run (testdata/speed/bt_optstrategy.py). Both report the combination with the highest
// final value: they must agree.
func (b *bench) study(csvPath, bt string, walkForward bool) error {
	data, err := os.ReadFile(csvPath)
	if err != nil {
		return err
	}
	req, err := http.NewRequest("POST", b.api+"/api/data/"+b.source+"/BENCHSTUDY/bars?timeframe=1d&name=bench-study", bytes.NewReader(data))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "text/csv")
	resp, err := b.client.Do(req)
	if err != nil {
		return err
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode >= 300 {
		return fmt.Errorf("import %s: %d %s", csvPath, resp.StatusCode, msg)
	}

	body := map[string]any{
		"strategy_id": b.sma, "data_source": b.source, "symbol": "BENCHSTUDY",
		"start_date": studyFrom, "end_date": studyTo,
		"space": map[string]any{
			"fast": map[string]int{"start": 2, "stop": 51, "step": 1},
			"slow": map[string]int{"start": 60, "stop": 250, "step": 10},
		},
		"objective": "final_value",
	}
	if walkForward {
		// each fold optimises the same grid on 2 years and tests its winner on the next year
		body["walk_forward"] = map[string]any{"train": "2y", "test": "1y"}
		st, elapsed, err := b.runStudy(body)
		if err != nil {
			return err
		}
		var wf struct {
			Folds        []struct{ Status string }
			AnnualReturn *float64 `json:"annual_return"`
			Efficiency   *float64
		}
		if err := b.call("GET", "/api/studies/"+st.ID+"/walk-forward", nil, &wf); err != nil {
			return err
		}
		fmt.Printf("walk-forward: %d folds x 1,000 combinations (%d runs of about 500 bars) of %s, and each fold's winner out of sample: submit -> all done in %.2f s; stitched out-of-sample annual return %s, efficiency %s\n",
			len(wf.Folds), st.Total, csvPath, elapsed.Seconds(), fmtPtr(wf.AnnualReturn), fmtPtr(wf.Efficiency))
		return nil
	}
	st, elapsed, err := b.runStudy(body)
	if err != nil {
		return err
	}
	fmt.Printf("study: %d combinations x %s..%s of %s: all stored in %.2f s (%d done, %d failed); best %v final value %.9f\n",
		st.Total, studyFrom, studyTo, csvPath, elapsed.Seconds(), st.Done, st.Failed, st.Best.Params, st.Best.Objective)
	if bt == "" {
		return nil
	}
	out, err := exec.Command("python3", "testdata/speed/bt_optstrategy.py", "--backtrader", bt,
		"--data", csvPath, "--from", studyFrom, "--to", studyTo).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return fmt.Errorf("bt_optstrategy.py: %w: %s", err, ee.Stderr)
		}
		return fmt.Errorf("bt_optstrategy.py: %w", err)
	}
	var r struct {
		Combinations int     `json:"combinations"`
		Bars         any     `json:"bars"`
		Seconds      float64 `json:"seconds"`
		Maxcpus      int     `json:"maxcpus"`
		Best         struct {
			Fast       int     `json:"fast"`
			Slow       int     `json:"slow"`
			FinalValue float64 `json:"final_value"`
		} `json:"best"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(out), &r); err != nil {
		return fmt.Errorf("bt_optstrategy.py printed %q: %w", out, err)
	}
	fmt.Printf("study: backtrader optstrategy, same grid: %d combinations x %v bars on %d processes in %.1f s (%.0fx the service); best fast=%d slow=%d final value %.9f\n",
		r.Combinations, r.Bars, r.Maxcpus, r.Seconds, r.Seconds/elapsed.Seconds(), r.Best.Fast, r.Best.Slow, r.Best.FinalValue)
	return nil
}

type studyState struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	Total  int    `json:"total"`
	Done   int    `json:"done"`
	Failed int    `json:"failed"`
	Best   *struct {
		Params    map[string]any `json:"params"`
		Objective float64        `json:"objective"`
	} `json:"best"`
}

// runStudy submits a study and waits for it to complete: the time from submit to the end.
func (b *bench) runStudy(req map[string]any) (studyState, time.Duration, error) {
	var st studyState
	t0 := time.Now()
	if err := b.call("POST", "/api/studies", req, &st); err != nil {
		return st, 0, err
	}
	deadline := time.Now().Add(10 * time.Minute)
	for st.Status == "pending" || st.Status == "running" {
		if time.Now().After(deadline) {
			return st, 0, fmt.Errorf("study %s still %s after 10 minutes (%d of %d done)", st.ID, st.Status, st.Done, st.Total)
		}
		time.Sleep(20 * time.Millisecond)
		if err := b.call("GET", "/api/studies/"+st.ID, nil, &st); err != nil {
			return st, 0, err
		}
	}
	elapsed := time.Since(t0)
	if st.Status != "completed" || st.Best == nil {
		return st, 0, fmt.Errorf("study %s ended %s (%d done, %d failed)", st.ID, st.Status, st.Done, st.Failed)
	}
	return st, elapsed, nil
}

func fmtPtr(v *float64) string {
	if v == nil {
		return "undefined"
	}
	return fmt.Sprintf("%.4f", *v)
}
