package up

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"time"
)

// Mute from the phone: a firing notification carries an action ("Mute 1 h")
// that POSTs to the relay's MutePath, as the phone reaches it
// (PERCAUSE_MUTE_URL, for example the relay published with `tailscale
// serve`). The relay makes an Alertmanager silence of every alert of the
// installation until the end the action names. What authorises it is a
// token good for that silence only: an HMAC, under a key kept in the data
// folder, of the installation and the end; past the end it is refused.
const (
	// MutePath is where the phone's action posts.
	MutePath = "/mute"
	// MuteFor is how long a mute lasts from the notification it came with.
	MuteFor = time.Hour
	// MuteKeyFile (in ConfigDir) is the key the tokens are made with:
	// made once, readable by its owner only.
	MuteKeyFile = "mute.key"
	// SilenceCreator is the createdBy of the silences the relay makes: the
	// page lifts only those.
	SilenceCreator = "percause up"
)

// loadMuteKey reads the key, making it on first use.
func loadMuteKey(path string) ([]byte, error) {
	if b, err := os.ReadFile(path); err == nil && len(b) == 64 {
		if k, err := hex.DecodeString(string(b)); err == nil {
			return k, nil
		}
	}
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, []byte(hex.EncodeToString(k)), 0o600); err != nil {
		return nil, err
	}
	return k, os.Chmod(path, 0o600)
}

// muteToken authorises the silence of installation until end, and nothing
// else.
func muteToken(key []byte, installation string, end time.Time) string {
	m := hmac.New(sha256.New, key)
	fmt.Fprintf(m, "mute\x00%s\x00%d", installation, end.Unix())
	return hex.EncodeToString(m.Sum(nil))
}

// muteAction is the action a firing notification of installation carries,
// or nil when the relay has no address the phone reaches.
func (r *relay) muteAction(installation string) []action {
	if r.muteURL == "" || installation == "" || r.muteKey == nil {
		return nil
	}
	end := r.now().Add(MuteFor).Truncate(time.Minute).Add(time.Minute)
	q := url.Values{"i": {installation}, "until": {strconv.FormatInt(end.Unix(), 10)}, "t": {muteToken(r.muteKey, installation, end)}}
	return []action{{Action: "http", Label: "Mute until " + end.In(r.loc).Format("15:04"), URL: r.muteURL + MutePath + "?" + q.Encode(), Method: http.MethodPost, Clear: true}}
}

// serveMute makes the silence a token authorises.
func (r *relay) serveMute(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	q := req.URL.Query()
	inst, token := q.Get("i"), q.Get("t")
	secs, err := strconv.ParseInt(q.Get("until"), 10, 64)
	if err != nil || inst == "" || !printable(inst) || r.muteKey == nil {
		r.refused.Add(1)
		http.Error(w, "not a mute this relay made", http.StatusBadRequest)
		return
	}
	end := time.Unix(secs, 0)
	if !hmac.Equal([]byte(token), []byte(muteToken(r.muteKey, inst, end))) {
		r.refused.Add(1)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	now := r.now()
	if !now.Before(end) {
		r.refused.Add(1)
		http.Error(w, "this mute ended at "+end.In(r.loc).Format("15:04"), http.StatusGone)
		return
	}
	r.mu.Lock()
	id, done := r.mutes[token]
	r.mu.Unlock()
	if !done {
		id, err = r.silence(req.Context(), inst, now, end)
		if err != nil {
			r.logf("mute of installation %s: %v", inst, err)
			http.Error(w, "Alertmanager did not make the silence: "+err.Error(), http.StatusBadGateway)
			return
		}
		r.mu.Lock()
		r.mutes[token] = id
		r.mu.Unlock()
		r.logf("muted installation %s until %s (silence %s), from a notification", inst, end.In(r.loc).Format("15:04:05"), id)
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintf(w, "muted installation %s until %s (silence %s)\n", inst, end.In(r.loc).Format("15:04 MST"), id)
}

// silence asks Alertmanager for a silence of every alert of installation
// from start to end, and returns its ID.
func (r *relay) silence(ctx context.Context, installation string, start, end time.Time) (string, error) {
	body, _ := json.Marshal(map[string]any{
		"matchers":  []map[string]any{{"name": labelInstallation, "value": installation, "isRegex": false, "isEqual": true}},
		"startsAt":  start.UTC().Format(time.RFC3339),
		"endsAt":    end.UTC().Format(time.RFC3339),
		"createdBy": SilenceCreator,
		"comment":   "muted from a notification on the phone until " + end.In(r.loc).Format("15:04 MST"),
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.alertmanager+"/api/v2/silences", bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := r.client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("it answered %s: %s", resp.Status, bytes.TrimSpace(b))
	}
	var out struct {
		SilenceID string `json:"silenceID"`
	}
	if err := json.Unmarshal(b, &out); err != nil || out.SilenceID == "" {
		return "", errors.New("its answer names no silence")
	}
	return out.SilenceID, nil
}
