package verdict

import "strconv"

// Earlier is what a holder of a launch's turns kept of the turns before
// this one: each one's pool tally and live counts, by turn index. The pool
// and state rules read across turns; a turn that carries no history of its
// own (the app's own lines, most clients other than the Go SDK) is read
// against these. A turn's own history (pippa.pool.resets.before,
// pippa.live.<kind>.before) wins over them: the phone saw every turn of
// its launch, a holder only those that reached it
// (the verdict processor README, "State").
type Earlier struct {
	// Turns are the launch's turns before this one that were seen, oldest
	// first, each index below the turn's.
	Turns []PastTurn
	// Began says why the holder began a new launch with this turn under a
	// service.instance.id it had seen before ("" when it did not): the
	// evidence repeats it, so a client that reuses its ID across a
	// relaunch is seen doing so.
	Began string
}

// PastTurn is what a later turn of the launch reads of one turn.
type PastTurn struct {
	Index int64
	Pool  Opt[int64]
	Live  []LiveCount
}

// LiveCount is one live-object count at the end of a turn.
type LiveCount struct {
	Kind  string
	Count int64
}

// PastOf is what a later turn of the launch reads of t: its tally and its
// live counts as they stood at its end.
func PastOf(t *TurnReadings) PastTurn {
	p := PastTurn{Index: t.Index}
	if t.HasPoolResets {
		p.Pool = Some(t.PoolResets)
	}
	if len(t.Live) > 0 {
		p.Live = make([]LiveCount, len(t.Live))
		for i, ls := range t.Live {
			p.Live[i] = LiveCount{Kind: ls.Kind, Count: ls.Series[len(ls.Series)-1]}
		}
	}
	return p
}

// at returns the kept turn with this index.
func (e *Earlier) at(index int64) (*PastTurn, bool) {
	if e == nil {
		return nil, false
	}
	for i := range e.Turns {
		if e.Turns[i].Index == index {
			return &e.Turns[i], true
		}
	}
	return nil, false
}

func (p *PastTurn) live(kind string) (int64, bool) {
	for _, l := range p.Live {
		if l.Kind == kind {
			return l.Count, true
		}
	}
	return 0, false
}

// CarriesHistory reports whether the turn carries the history the
// cross-turn rules read (the Go SDK's turns after a launch's first).
func (t *TurnReadings) CarriesHistory() bool {
	if t.HasPoolBefore {
		return true
	}
	for _, ls := range t.Live {
		if len(ls.Series) > 1 {
			return true
		}
	}
	return false
}

// NeedsEarlier reports whether the turn's cross-turn rules read its
// launch's earlier turns from a holder: it is not its launch's first turn,
// carries no history of its own, and reports a reading those turns could
// make a rule of: a tally above 0 (a tally of 0 never moved), or a live
// count of at least rising (a count that rose on each of the last rising
// turns from 0 or more is at least that).
func (t *TurnReadings) NeedsEarlier(rising int) bool {
	if t.Index <= 1 || t.CarriesHistory() {
		return false
	}
	return t.poolReadsEarlier() || t.liveReadsEarlier(rising)
}

func (t *TurnReadings) poolReadsEarlier() bool { return t.HasPoolResets && t.PoolResets > 0 }

func (t *TurnReadings) liveReadsEarlier(rising int) bool {
	for _, ls := range t.Live {
		if ls.Series[len(ls.Series)-1] >= int64(rising) {
			return true
		}
	}
	return false
}

// crossTurn is what the pool and state rules read across turns: the
// previous turn's tally, the live series, and what was not seen.
type crossTurn struct {
	poolBefore Opt[int64]
	// firstTurn: no previous turn of the launch, the tally's baseline is 0.
	firstTurn bool
	// unseen is the previous turn's index when neither the turn nor the
	// holder had it (0: none missing).
	unseen int64
	live   []LiveSeries
	// disagrees: the turn's own history and what the holder kept differ.
	disagrees bool
	// began is the holder's Began.
	began string
}

// readCrossTurn joins the turn's own history with what the holder kept,
// the turn's own winning.
func readCrossTurn(t *TurnReadings, e *Earlier, rising int) crossTurn {
	var x crossTurn
	if e != nil {
		x.began = e.Began
	}
	prev, seen := e.at(t.Index - 1)
	switch {
	case t.HasPoolBefore:
		x.poolBefore = Some(t.PoolBefore)
		if seen && prev.Pool.OK && prev.Pool.V != t.PoolBefore {
			x.disagrees = true
		}
	case seen && prev.Pool.OK:
		x.poolBefore = prev.Pool
	case t.Index <= 1:
		x.firstTurn = true
	case t.poolReadsEarlier():
		x.unseen = t.Index - 1
	}
	x.live = make([]LiveSeries, len(t.Live))
	for i, ls := range t.Live {
		if len(ls.Series) > 1 {
			x.live[i] = ls
			if kept := keptSeries(ls.Kind, t.Index, e, len(ls.Series)-1); len(kept) > 0 && !tailEqual(ls.Series[:len(ls.Series)-1], kept) {
				x.disagrees = true
			}
			continue
		}
		kept := keptSeries(ls.Kind, t.Index, e, rising)
		x.live[i] = LiveSeries{Kind: ls.Kind, Series: append(kept, ls.Series...)}
		// The turn before the kept run, when the rule could have fired on it.
		if missing := t.Index - int64(len(kept)) - 1; len(kept) < rising && missing >= 1 && x.unseen == 0 &&
			ls.Series[len(ls.Series)-1] >= int64(rising) {
			x.unseen = missing
		}
	}
	return x
}

// keptSeries is the kind's count at the end of the up to n turns before
// index that the holder kept in a row, oldest first.
func keptSeries(kind string, index int64, e *Earlier, n int) []int64 {
	var back []int64
	for k := int64(1); k <= int64(n); k++ {
		p, ok := e.at(index - k)
		if !ok {
			break
		}
		c, ok := p.live(kind)
		if !ok {
			break
		}
		back = append(back, c)
	}
	out := make([]int64, len(back))
	for i, c := range back {
		out[len(back)-1-i] = c
	}
	return out
}

// tailEqual reports whether the end of own equals kept.
func tailEqual(own, kept []int64) bool {
	if len(kept) > len(own) {
		kept = kept[len(kept)-len(own):]
	}
	own = own[len(own)-len(kept):]
	for i := range kept {
		if own[i] != kept[i] {
			return false
		}
	}
	return true
}

// unseenSentence is the evidence's note of a previous turn not seen.
func unseenSentence(index int64) string {
	return "turn " + strconv.FormatInt(index, 10) + " of this launch not seen"
}
