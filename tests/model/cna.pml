/* tests/model/cna.pml — the shim's lock protocol, for the spin model checker.
 *
 * N threads take one mutex (threads 1..OPS_THREADS OPS times, the others
 * once; a thread that comes back reuses its node), each time choosing
 * at random the queued path (pthread_mutex_lock) or the timed path
 * (pthread_mutex_timedlock, which may give up).  Modelled, in the order of
 * cna/cna.c and interpose/:
 *   - the word: 0 free, 1 held, 2 held with possible sleepers, 3 held and
 *     asked for by a starving waiter (word_handoff.h); the fast path CAS
 *     0->1 (word_try_lock, glibc_mutex.h) that lets newcomers barge;
 *   - futexes: a wait compares and sleeps atomically, a wake takes any one
 *     sleeper; a wait with a deadline may time out while still asleep;
 *   - the first waiter (word_lock_as_first_waiter: a newcomer that finds
 *     the word 1 makes it 2 and sleeps on it glibc's way, without queueing;
 *     if it finds 2 or 3 it queues); the spinner claim (word_spinner.h),
 *     which lets one newcomer at a time spin on the word first, adds no
 *     state: a spin is CAS 0->1 attempts, as the fast path's, and whether
 *     there is one is already free (it stops at a 2 or a 3 as it may at
 *     any time);
 *   - the queue fallback (no queue record free: word_lock_sleeping alone);
 *   - the MCS enqueue (cna_enqueue: exchange the tail, then link prev->next);
 *   - waiting for the grant (wait_for_grant: spin, CAS WAITING->PARKED or
 *     WAITING->DORMANT, chosen at random as the spin credit would, then
 *     futex-wait while so);
 *   - the head competing for the word (word_lock_as_head: spin on CAS 0->1,
 *     then word_lock_sleeping: exchange in 2, futex-wait on 2; a head that
 *     parked DORMANT goes straight to word_lock_sleeping); the node gate
 *     (word.h), which leaves a free word alone for a yield, adds no state:
 *     a spin may already stop, or be delayed, whatever the word holds;
 *   - passing the headship (cna_pass_head: CAS the tail to the secondary
 *     tail when there is no next, wait_for_next, choose_successor with
 *     threshold flush, shuffle reduction and order_queue moving remote
 *     waiters to the secondary queue, except one that has waited past the
 *     threshold (a nondeterministic choice at every remote waiter), grant_with/grant: exchange the state
 *     to HEAD, then wake if it was PARKED; if DORMANT, store 2 in the word
 *     the granter owns and requeue the sleeper from its node to the word);
 *   - the handover to a starving waiter (word_handoff.h, word.c): every
 *     waiter in word_lock_sleeping (the first waiter, the queue fallback,
 *     a head), once past its deadline (a choice at every lost exchange)
 *     and once per real futex wake, claims the handoff slot NONE -> TOKEN
 *     (else it sleeps as before) and spins in lock_starving: GRANTED makes
 *     it the owner (2 into the word, the slot back to NONE); a 0 it takes
 *     by exchanging in 2; a 1 or 2 it asks for with CAS to 3; when the
 *     bounded spin is spent (a choice) it withdraws: CAS the slot TOKEN ->
 *     NONE (failing, it was granted), CAS the word 3 -> 2, and sleeps;
 *   - unlocking (word_unlock: exchange in 0, as glibc's; at a 2 wake one;
 *     at a 3, word_unlock_waited takes the word back with CAS 0 -> 2 (a
 *     barger may win it first: then wake one) and grants it if our token
 *     is in the slot, CAS TOKEN -> GRANTED, waking nobody, or else frees it
 *     again and wakes one; at a 3 the unlock
 *     may also be glibc's own, which never grants); glibc's waiters'
 *     exchange in 2 and wait on 2 treat a
 *     3 as a 2 (the claimant asks again), and so does the requeue's 2;
 *   - timed waiters (word_lock_until) that wait on the word only and never
 *     ask for it; their exchange in 2 is glibc's, over a 3 too.
 * Threads 1 and 3 are on NUMA node 0, thread 2 (and 4) on node 1, so the
 * head really moves remote waiters aside.  Thresholds, spin budgets and
 * the shuffle coin are nondeterministic choices.
 *
 * In the handover each step is one atomic access of word.c (a failed CAS
 * that changes nothing but the way on is no step of its own).  The
 * temporaries of an acquisition are reset once dead (at the critical
 * section), so that stale values do not multiply the states.
 *
 * Checked (see run.sh): mutual exclusion (assert), no invalid end state
 * (nobody asleep or stuck when all else is done), and, under weak
 * fairness, that every thread finishes (no lost wake-up, no one stranded
 * in a queue).  A ghost variable names the claimant, so that two asserts
 * show why a grant needs no wake: a claimant never sleeps, and the unlock
 * that grants finds it awake.  -DMUTATION=k plants a known bug so the
 * checks are seen to fail: 1 unlock forgets the wake, 2 grant forgets the
 * wake, 3 the head skips the word, 4 the secondary tail's next is cleared
 * after the tail CAS (a race once present in cna_pass_head), 5 a DORMANT
 * head takes the word with CAS 0->1 (dropping the 2 that other sleepers
 * need; a bug once present in contended_lock), 6 the requeue leaves the
 * word's 1 in place, 7 the withdrawing claimant stores NONE in the slot
 * instead of CAS TOKEN -> NONE (it drops a grant that came first, and
 * sleeps owning the mutex), 8 the unlock grants the 3 it took back
 * without the CAS on the slot's token (to a claimant that has withdrawn,
 * or to nobody), 9 the
 * claimant handed the word marks it 1, not 2 (the next unlock wakes none
 * of the sleepers that waited on the 2 it had asked over).
 */
#ifndef N
#define N 3
#endif
/* Threads 1..OPS_THREADS lock OPS times; the others once. */
#ifndef OPS_THREADS
#define OPS_THREADS 1
#endif
#ifndef OPS
#define OPS 2
#endif
#define ops_of(t) ((t) <= OPS_THREADS -> OPS : 1)
#ifndef MUTATION
#define MUTATION 0
#endif

#define NIL 0                   /* node i+... : node of thread t is t (1..N) */
#define WAITING 0
#define PARKED 1
#define HEAD 2
#define DORMANT 3
#define AWAKE 0
#define ON_WORD 1               /* asleep in futex_wait on the mutex word */
#define ON_NODE 2               /* asleep in futex_wait on its own node state */

#define NONE 0                  /* handoff slot: nobody asks */
#define GRANTED 1               /* the owner handed the word to the claimant */
#define TOKEN 2                 /* this process's token: a claimant asks */

#define real_node(t) (((t) - 1) % 2)

byte word = 0;                  /* 0 free, 1 held, 2 + sleepers, 3 + asked for */
byte slot = NONE;               /* the mutex's handoff slot (word_handoff.h) */
byte claimant = 0;              /* ghost: the thread whose token is in the slot */
byte tail = NIL;                /* cna_queue.tail */
byte nxt[N + 1];                /* cna_node.next */
byte state[N + 1];              /* cna_node.state */
byte sec_head[N + 1];           /* cna_node.sec_head, written by the granter */
byte sec_tail[N + 1];
byte numa[N + 1];               /* cna_node.numa_node: preferred node while head */
byte asleep[N + 1];             /* futex wait queue membership */
byte in_cs = 0;
byte finished = 0;

/* futex_wake_private(word, 1): any one sleeper on the word, if there is one. */
inline wake_one_on_word()
{
	atomic {
		if
		:: asleep[1] == ON_WORD -> asleep[1] = AWAKE
		:: asleep[2] == ON_WORD -> asleep[2] = AWAKE
		:: asleep[3] == ON_WORD -> asleep[3] = AWAKE
#if N > 3
		:: asleep[4] == ON_WORD -> asleep[4] = AWAKE
		:: (asleep[1] != ON_WORD && asleep[2] != ON_WORD &&
		    asleep[3] != ON_WORD && asleep[4] != ON_WORD) -> skip
#else
		:: (asleep[1] != ON_WORD && asleep[2] != ON_WORD &&
		    asleep[3] != ON_WORD) -> skip
#endif
		fi
	}
}

/* futex_wait_private(word, 2) without a deadline: returns once woken.  A
 * real wait (not EAGAIN: the word is not 2, a 3 included) lets the waiter
 * ask for the word once more (may_ask), asked = 0.  A claimant never
 * sleeps: it withdraws first. */
inline sleep_on_word()
{
	atomic {
		if
		:: word == 2 -> assert(claimant != me); asleep[me] = ON_WORD; asked = 0
		:: else -> skip        /* EAGAIN */
		fi
	}
	(asleep[me] == AWAKE)
}

/* word_unlock(): x -> 0, as glibc's; if x was 2 or 3,
 * word_unlock_waited(): at a 3 with our token in the slot, take the word
 * straight back (CAS 0 -> 2; a barger may have taken it first) and grant
 * it (CAS TOKEN -> GRANTED: no wake, the claimant spins); if no claim of
 * ours is there (withdrawn, or none), free the word again.  Otherwise
 * wake one sleeper.
 * With a 3 the unlock may also be glibc's own (or a forked child's, whose
 * token differs), which never grants.  old = 4 marks "taken back". */
inline unlock_word()
{
	atomic { old = word; word = 0 }
	if
	:: old <= 1 -> old = 0
	:: old >= 2 ->
		if
		:: old == 3 ->             /* take it back, then grant if the slot is ours */
			atomic {
				if
				:: word == 0 -> word = 2; old = 4
				:: else -> skip        /* a barger won the 0 */
				fi
			}
			if
			:: old == 4 ->
				atomic {
					if
#if MUTATION == 8
					:: true ->     /* word_handoff_grant() without the CAS */
						assert(claimant != 0 && asleep[claimant] == AWAKE);
#else
					:: slot == TOKEN ->
						assert(asleep[claimant] == AWAKE);   /* it spins: no wake */
#endif
						slot = GRANTED; old = 0
					:: else -> skip
					fi
				}
				if
				:: old == 4 -> atomic { word = 0; old = 2 }   /* withdrawn: free it again */
				:: else -> skip
				fi
			:: else -> skip
			fi
		:: true -> skip                /* glibc's unlock, or no claim of ours */
		fi
#if MUTATION != 1
		if
		:: old > 1 -> atomic { old = 0; wake_one_on_word() }
		:: else -> old = 0
		fi
#else
		old = 0
#endif
	fi
}

inline critical_section()
{
	atomic {
		in_cs++;
		assert(in_cs == 1);
		/* The acquisition's temporaries are dead now: forget their values,
		 * or every one of them would make another copy of each state. */
		prev = NIL; old = 0; got = 0; sh = NIL; st = NIL; pref = 0; succ = NIL;
		nx = NIL; pv = NIL; cur = NIL; after = NIL; sleeping = PARKED; parked = 0
	}
	in_cs--
}

/* lock_starving(): claim the slot (NONE -> TOKEN), then in rounds: if the
 * slot reads GRANTED, the mutex is ours (2 into the word, then the slot
 * back to NONE); else read the word: a 0 is taken glibc's way (exchange in
 * 2; then the slot back to NONE), a 1 or a 2 is asked for (CAS to 3; a
 * failed CAS starts the next round).  After a round that saw or wrote the 3,
 * the bounded spin (STARVING_SPIN_ROUNDS) is a choice: spin on, or
 * withdraw: CAS the slot TOKEN -> NONE (failing, it was GRANTED: spin on
 * and take it), then CAS the word 3 -> 2.  won: 2 asking, 4 asked, 3 owns
 * the word but not yet the slot, 5 withdrawn; at the end 1 owns the mutex,
 * 0 does not (the claim failed, or it withdrew). */
inline lock_starving()
{
	if                         /* word_handoff_claim() */
	:: atomic { slot == NONE -> slot = TOKEN; claimant = me; won = 2 }
	:: atomic { slot != NONE -> won = 0 }   /* another claimant, or one just granted */
	fi;
	do
	:: won != 2 -> break
	:: won == 2 && slot == GRANTED ->  /* word_handoff_granted(): ours, still held */
#if MUTATION == 9
		word = 1;
#else
		word = 2;              /* no 3 outlives the request; sleepers may exist */
#endif
		atomic { slot = NONE; claimant = 0; won = 1 }   /* word_handoff_release() */
	:: won == 2 && slot != GRANTED ->
		if
		:: word == 0 ->        /* freed without a handover: exchange in 2 */
			atomic {
				if
				:: word == 0 -> won = 3
				:: else -> skip
				fi;
				word = 2
			}
			if
			:: won == 3 -> atomic { slot = NONE; claimant = 0; won = 1 }
			:: else -> skip
			fi
		:: word == 1 ->        /* ask: CAS 1 -> 3 */
			atomic {
				if
				:: word == 1 -> word = 3; won = 4
				:: else -> skip
				fi
			}
		:: word == 2 ->        /* ask: CAS 2 -> 3 */
			atomic {
				if
				:: word == 2 -> word = 3; won = 4
				:: else -> skip
				fi
			}
		:: word == 3 -> won = 4   /* asked already */
		fi;
		if
		:: won == 4 ->         /* spin on, or the rounds are spent: withdraw */
			if
			:: won = 2
#if MUTATION == 7
			:: atomic { slot = NONE; claimant = 0; won = 5 }   /* a store, not a CAS */
#else
			:: atomic { slot == TOKEN -> slot = NONE; claimant = 0; won = 5 }
			:: atomic { slot == GRANTED -> won = 2 }   /* the CAS fails: ours after all */
#endif
			fi
		:: else -> skip
		fi;
		if
		:: won == 5 ->         /* our 3 acts as a 2 now: make it one */
			atomic {
				if
				:: word == 3 -> word = 2
				:: else -> skip
				fi;
				won = 0
			}
		:: else -> skip
		fi
	od
}

/* word_lock_sleeping(): exchange in 2 until the old value was 0.  Past the
 * starving deadline (a choice) and once per real wake (asked == 0) a lost
 * exchange asks for the word (lock_starving) instead of sleeping again. */
inline lock_word_sleeping()
{
	do
	:: atomic {
		old = word;
		word = 2;
		if
		:: old == 0 -> asked = 0; break
		:: else -> old = 0
		fi
	   }
	   if
	   :: asked == 0 ->
		if
		:: skip            /* not past the deadline */
		:: lock_starving();
		   if
		   :: won == 1 -> won = 0; break
		   :: else -> asked = 1
		   fi
		fi
	   :: else -> skip
	   fi;
	   sleep_on_word()
	od
}

/* word_lock_as_head(): a bounded spin of CAS 0->1, then sleep for it. */
inline lock_word_as_head()
{
	got = 0;
	do
	:: atomic { word == 0 -> word = 1; got = 1 }; break
	:: break                   /* spin budget spent */
	od;
	if
	:: got == 0 -> lock_word_sleeping()
	:: else -> skip
	fi
}

/* word_lock_as_first_waiter(): got = 1 once it owns the word, 0 to queue. */
inline lock_as_first_waiter()
{
	do
	:: atomic { word == 0 -> word = 1; got = 1 }; break
	:: atomic { word == 1 -> word = 2; got = 2 }; break
	:: atomic { word >= 2 -> got = 0 }; break   /* 2 or 3: somebody waits */
	od;
	if
	:: got == 2 -> lock_word_sleeping(); got = 1
	:: else -> skip
	fi
}

/* cna_enqueue() then wait_for_grant(). */
inline join_queue()
{
	/* Nobody reads an unpublished node: its set-up joins the exchange. */
	atomic {
		nxt[me] = NIL;
		state[me] = WAITING;
		numa[me] = real_node(me);
		sec_head[me] = NIL;
		sec_tail[me] = NIL;
		prev = tail;
		tail = me
	}
	if
	:: prev != NIL ->
		nxt[prev] = me;
		/* spin: leave as soon as HEAD is seen, or give up at any time */
		if
		:: state[me] == HEAD -> skip
		:: else -> skip;
			if
			:: sleeping = PARKED
			:: sleeping = DORMANT
			fi;
			atomic {
				if
				:: state[me] == WAITING -> state[me] = sleeping; parked = 1
				:: else -> skip
				fi
			}
			do
			:: state[me] == HEAD -> break
			:: else -> skip;
				atomic {
					if
					:: state[me] == sleeping -> asleep[me] = ON_NODE
					:: else -> skip
					fi
				}
				(asleep[me] == AWAKE)
			od
		fi
	:: else -> skip            /* empty queue: head at once */
	fi
}

/* A DORMANT head may have been requeued onto the word: glibc's way only. */
inline lock_word_as_dormant_head()
{
#if MUTATION == 5
	lock_word_as_head()
#else
	lock_word_sleeping()
#endif
}

/* grant(): state -> HEAD by exchange; the wake is the granter's last touch.
 * s reads its succession only after it sees HEAD, so those writes join the
 * exchange (grant_with() then the release exchange in grant()). */
inline grant(s)
{
	atomic {
		sec_head[s] = sh;
		sec_tail[s] = st;
		numa[s] = pref;
		old = state[s];
		state[s] = HEAD
	}
#if MUTATION != 2
	if
	:: old == PARKED ->
		atomic {
			if
			:: asleep[s] == ON_NODE -> asleep[s] = AWAKE
			:: else -> skip
			fi
		}
	:: old == DORMANT ->
#if MUTATION != 6
		word = 2;              /* we own the word: only 2 is written meanwhile */
#endif
		atomic {               /* FUTEX_CMP_REQUEUE(node, HEAD, word) */
			if
			:: state[s] == HEAD && asleep[s] == ON_NODE -> asleep[s] = ON_WORD
			:: else -> skip
			fi
		}
	:: else -> skip
	fi
#endif
}

/* order_queue(): first waiter on the preferred node; the remote run before
 * it goes to the secondary tail.  Stand-in successor if there is none. */
inline order_queue()
{
	pv = NIL;
	cur = nx;
	do
	:: real_node(cur) == pref -> break
	:: else ->
		if
		:: break               /* cur waited past the threshold: in order */
		:: after = nxt[cur];
			if
			:: after == NIL -> cur = NIL; break
			:: else -> pv = cur; cur = after
			fi
		fi
	od;
	if
	:: cur == NIL -> succ = nx             /* keeps the preference */
	:: else -> skip;
		if
		:: pv != NIL ->
			nxt[pv] = NIL;
			if
			:: st != NIL -> nxt[st] = nx
			:: else -> sh = nx
			fi;
			st = pv
		:: else -> skip
		fi;
		succ = cur
	fi
}

/* cna_pass_head(): choose the successor and grant, or empty the queue. */
inline pass_head()
{
	atomic {                   /* our succession is ours alone while head */
		sh = sec_head[me];
		st = sec_tail[me];
		pref = numa[me];
		succ = NIL;
		nx = nxt[me]
	}
	if
	:: nx == NIL ->
#if MUTATION != 4
		if
		:: st != NIL -> nxt[st] = NIL
		:: else -> skip
		fi;
#endif
		atomic {
			if
			:: tail == me -> tail = st; got = 1
			:: else -> got = 0
			fi
		}
		if
		:: got == 1 && sh != NIL ->
#if MUTATION == 4
			nxt[st] = NIL;
#endif
			succ = sh;             /* promote_secondary() */
			pref = real_node(sh);
			sh = NIL;
			st = NIL
		:: got == 1 && sh == NIL -> skip   /* queue now empty */
		:: got == 0 ->
			(nxt[me] != NIL);      /* wait_for_next() */
			nx = nxt[me]
		fi
	:: else -> skip
	fi;
	if
	:: nx != NIL && succ == NIL ->
		if
		:: sh != NIL ->
			if
			:: nxt[st] = nx;       /* threshold passed: flush_secondary() */
			   succ = sh;
			   pref = real_node(sh);
			   sh = NIL;
			   st = NIL
			:: order_queue()
			fi
		:: else -> skip;
			if
			:: succ = nx;          /* shuffle reduction keeps FIFO */
			   pref = real_node(nx)
			:: order_queue()
			fi
		fi
	:: else -> skip
	fi;
	if
	:: succ != NIL -> grant(succ)
	:: else -> skip
	fi
}

/* pthread_mutex_lock(): fast path, else the first waiter on the word, else
 * queue (or, with no queue record free, the word alone), compete as head,
 * pass on. */
inline lock_queued()
{
	atomic {
		if
		:: word == 0 -> word = 1; got = 1
		:: else -> got = 0
		fi
	}
	if
	:: got == 0 ->
		if
		:: skip                /* the spin saw a sleeper: queue */
		:: lock_as_first_waiter()
		fi
	:: else -> skip
	fi;
	if
	:: got == 0 ->
		if
		:: skip                /* queue_table_acquire() found a record */
		:: lock_word_sleeping(); got = 1   /* none free: the word only */
		fi
	:: else -> skip
	fi;
	if
	:: got == 0 ->
		parked = 0;
		join_queue();
#if MUTATION != 3
		if
		:: sleeping == DORMANT && parked == 1 -> lock_word_as_dormant_head()
		:: else -> lock_word_as_head()
		fi;
#endif
		pass_head()
	:: else -> skip
	fi;
	critical_section();
	unlock_word()
}

/* pthread_mutex_timedlock(): the word only; may time out while asleep. */
inline lock_timed()
{
	atomic {                   /* word_try_lock() in cnamutex_clocklock() */
		if
		:: word == 0 -> word = 1; got = 1
		:: else -> got = 0
		fi
	}
	do
	:: got == 1 -> break
	:: else ->
		atomic {           /* x -> 2: a 3 too, as glibc's waiters do */
			old = word;
			word = 2;
			if
			:: old == 0 -> got = 1; break
			:: else -> old = 0
			fi
		}
		atomic {
			if
			:: word == 2 -> asleep[me] = ON_WORD
			:: else -> skip
			fi
		}
		if
		:: asleep[me] == AWAKE -> skip         /* woken, or EAGAIN */
		:: atomic { asleep[me] == ON_WORD -> asleep[me] = AWAKE }; break  /* ETIMEDOUT */
		fi
	od;
	if
	:: got == 1 ->
		critical_section();
		unlock_word()
	:: else -> skip
	fi
}

proctype thread(byte me)
{
	byte prev, old, got, sh, st, pref, succ, nx, pv, cur, after;
	byte won = 0, asked = 0;   /* lock_starving(), lock_word_sleeping() */
	byte sleeping = PARKED, parked = 0;
	byte ops = 0;
	do
	:: ops < ops_of(me) ->
		ops++;
		if
		:: true -> lock_queued()
		:: true -> lock_timed()
		fi
	:: ops == ops_of(me) -> break
	od;
	finished++
}

init {
	atomic {
		byte t = 1;
		do
		:: t <= N -> run thread(t); t++
		:: else -> break
		od
	}
}

#ifdef LIVENESS
/* Every thread ends: nobody is left asleep or stranded in the queue. */
ltl all_finish { <> (finished == N) }
#endif
