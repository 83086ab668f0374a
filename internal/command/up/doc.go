// Package up runs what `percause up` starts: the collector on the embedded
// default, a Prometheus that scrapes it and evaluates the generated alert
// rules, an Alertmanager that routes every alert, and a relay that shapes
// each firing and each resolved alert into one message for the
// notification target (PERCAUSE_NOTIFY_URL), all on loopback, as child
// processes of one command.
//
// What it keeps, and where: nothing of its own beyond the files it writes
// into the data folder at every start (the three configurations, the
// relay's token, the logs). The collector's state, Prometheus's samples and
// Alertmanager's notification log live there too, so a restart of `up`
// neither forgets a turn nor notifies an alert Alertmanager already
// notified. What a crash of `up` itself can lose: a notification the relay
// was sending (Alertmanager sends it again, since the relay answers only
// once the target accepted it); its children are told to stop when it dies
// (on Linux).
//
// It keeps its children running: one that dies is restarted after a pause
// (keep.go), and after RestartWindow's limit `up` stops and says so. While
// everything answers it beats: a message scheduled at the target one bound
// ahead, replaced at every beat, is delivered when the beats stop. A
// firing notification may carry a mute (mute.go).
//
// Its configuration is Config, read from the environment by FromEnv and
// checked by Validate; Run starts everything, prints where it is, and stops
// it all, in order, by process ID.
package up
