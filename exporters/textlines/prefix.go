package textlines

import (
	"strconv"
	"strings"
	"time"
)

// What a line's prefix says besides the readings: when it was written and
// by which process, as os_log, syslog, journald and most loggers print
// them.

func prefixTime(p string) time.Time {
	for i := 0; i+19 <= len(p); i++ {
		c := p[i]
		if c < '0' || c > '9' || i > 0 && p[i-1] >= '0' && p[i-1] <= '9' {
			continue
		}
		if t, ok := isoAt(p[i:]); ok {
			return t
		}
	}
	return time.Time{}
}

func isoAt(s string) (time.Time, bool) {
	// 2006-01-02T15:04:05
	if len(s) < 19 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != ' ') || s[13] != ':' || s[16] != ':' {
		return time.Time{}, false
	}
	end := 19
	if end < len(s) && (s[end] == '.' || s[end] == ',') {
		end++
		for end < len(s) && s[end] >= '0' && s[end] <= '9' {
			end++
		}
	}
	zone := ""
	switch {
	case end < len(s) && s[end] == 'Z':
		zone = "Z"
	case end+6 <= len(s) && (s[end] == '+' || s[end] == '-') && s[end+3] == ':':
		zone = s[end : end+6]
	case end+5 <= len(s) && (s[end] == '+' || s[end] == '-'):
		zone = s[end:end+3] + ":" + s[end+3:end+5]
	}
	body := strings.Replace(s[:end], ",", ".", 1)
	body = body[:10] + "T" + body[11:]
	if zone == "" {
		zone = "Z"
	}
	t, err := time.Parse(time.RFC3339Nano, body+zone)
	if err != nil {
		return time.Time{}, false
	}
	return t, true
}

// prefixPID finds the process ID in the text before the tag: os_log's
// name[pid:thread] (Pippa[311:7001]), syslog's and journald's name[pid]
// (pippa-tts[4411]:), or RFC 5424's PROCID (<14>1 TIME HOST APP 311 MSGID).
// Zero when there is none.
func prefixPID(p string) int {
	for i := strings.IndexByte(p, '['); i > 0; {
		if c := p[i-1]; c != ' ' && c != '\t' && c != '[' {
			j := i + 1
			for j < len(p) && p[j] >= '0' && p[j] <= '9' {
				j++
			}
			if j > i+1 && j < len(p) && (p[j] == ']' || p[j] == ':') {
				if n, err := strconv.Atoi(p[i+1 : j]); err == nil && n > 0 {
					return n
				}
			}
		}
		next := strings.IndexByte(p[i+1:], '[')
		if next < 0 {
			break
		}
		i += 1 + next
	}
	if len(p) > 3 && p[0] == '<' {
		if end := strings.Index(p, ">1 "); end > 0 {
			f := strings.Fields(p[end+3:]) // TIMESTAMP HOSTNAME APP-NAME PROCID …
			if len(f) >= 4 {
				if n, err := strconv.Atoi(f[3]); err == nil && n > 0 {
					return n
				}
			}
		}
	}
	return 0
}
