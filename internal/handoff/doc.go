// Package handoff upgrades edge's binary without dropping a connection, the technique of nginx's
// USR2 and HAProxy's seamless reload: the running process starts the new binary with its listening
// sockets as inherited file descriptors, the new process serves on them and reports ready through a
// pipe, then the old one stops accepting and drains.
//
// TCP needs nothing more: both processes hold the same listening socket, so a connection waiting in
// its accept queue is taken by one of them, and the old process closing its descriptor leaves the
// socket open in the new one.
//
// UDP (QUIC) does: one socket cannot tell which process a datagram is for, and the old process's
// QUIC connections must keep receiving theirs until they end. Every process therefore issues
// connection IDs that start with a 4-byte tag of its own ([CIDGenerator], the idea of QUIC-LB's
// server IDs). Only the newest process reads the shared UDP socket; its [PacketConn] passes a datagram
// whose destination connection ID carries an older process's tag to that process over a
// SOCK_SEQPACKET pair made for the upgrade, and the old process reads from there instead of from the
// socket. Replies go straight out of the shared socket from either process. A client's first Initial
// carries a connection ID of its own choosing and so reaches the new process: new connections land
// there from the moment of the handoff. What is lost is only a handshake in flight at that instant
// (its client retransmits its first flight to the new process, which starts afresh).
//
// Sequence, old process P and new process C:
//
//  1. P starts C with every listening socket, one socket pair per UDP socket, and the write end of a
//     readiness pipe (ExtraFiles; EDGE_HANDOFF names them).
//  2. C binds nothing it inherited, starts serving TCP, and reports ready on the pipe; its QUIC
//     reads wait for P's release.
//  3. P stops reading each UDP socket, reads its pair instead, and sends the release; C reads the
//     socket from then on.
//  4. P stops accepting, drains (GOAWAY on HTTP/2 and HTTP/3, requests in flight finish) and exits.
//
// A C that fails before step 2 (bad binary, bad configuration, a port it cannot bind) is killed
// and P goes on serving as if nothing happened. Safe for concurrent use.
package handoff
