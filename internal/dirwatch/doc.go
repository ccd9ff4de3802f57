// Package dirwatch tells its owner when files it loaded from disk have changed: it watches the
// directories holding a set of files with fsnotify, picks out the events that concern those files,
// waits for a burst of them to end, and calls one callback. It is the one file watcher of the edge:
// the root uses it for the configuration and data files, package tls for certificates and ECH keys,
// package ratelimit for its block and allow lists.
//
// It watches directories, not files. A watch on a file follows its inode, so it goes deaf after the
// first replacement by rename (write a temporary file, rename it over), which is how editors, deploy
// tools and the Kubernetes atomic writer (a new timestamped directory, then the "..data" symlink
// renamed over) update files. An event concerns the set (Set.Relevant) when it names one of its
// paths or the file a path's symlinks resolve to, an entry of a directory in the set or of the
// directory a symlink resolves into, or a "..data"-style entry beside a path. A watched directory
// that is removed or renamed away is watched again as soon as it is back: until then its nearest
// existing ancestor is watched, and its reappearance counts as a change.
//
// It sits beside the request path, not on it: the callback is where the owner reloads and swaps
// the snapshot its requests read, so requests never wait for the watcher.
//
// Concurrency and reload: a Watcher belongs to the goroutine that calls Run. Run calls the
// callbacks (Options.Paths, OnChange, OnError) on that goroutine, one at a time, so they need no
// locking among themselves. OnChange is called once per burst of relevant events, after
// Options.Debounce of quiet and never later than Options.MaxDelay after the burst began; after
// every call the watched set is taken afresh from Options.Paths, so it follows what the owner
// loaded. When the kernel's event queue overflows, events were lost, so OnChange is called as for
// a change.
package dirwatch
