/* bench/sim/shadow/stdatomic.h — every atomic access is a simulation event.
 *
 * The library and the simulator's baseline locks are compiled with this
 * directory first on the include path.  It includes the compiler's own
 * <stdatomic.h>, then redefines the atomic_*_explicit operations (the plain
 * forms expand to these) so that each first calls sim_atomic_point(): the
 * simulator charges the access to the modelled cache line and may switch
 * to another simulated thread.  The operation itself then runs unchanged,
 * with no switch between the hook's return and it, so each atomic is one
 * indivisible step of the simulated machine.  Orders are kept but the
 * simulation is sequentially consistent in values (weak orderings are
 * TSan's and the model checker's job); in time, a plain store goes through
 * the modelled store buffer (engine.h) and a seq_cst store, an exchange on
 * x86, counts as an RMW.  A weak CAS may be told to fail spuriously.
 */
#ifndef SIM_SHADOW_STDATOMIC_H
#define SIM_SHADOW_STDATOMIC_H

#include_next <stdatomic.h>

enum sim_access { SIM_LOAD, SIM_STORE, SIM_RMW, SIM_CAS_WEAK };

/* Returns true when a weak CAS is to fail spuriously (never for others). */
_Bool sim_atomic_point(const volatile void *address, enum sim_access kind);

#undef atomic_load_explicit
#define atomic_load_explicit(PTR, MO)                                          \
	__extension__({                                                        \
		__auto_type sim_ptr_ = (PTR);                                  \
		__typeof__((void)0, *sim_ptr_) sim_val_;                       \
		sim_atomic_point(sim_ptr_, SIM_LOAD);                          \
		__atomic_load(sim_ptr_, &sim_val_, (MO));                      \
		sim_val_;                                                      \
	})

#undef atomic_store_explicit
#define atomic_store_explicit(PTR, VAL, MO)                                    \
	__extension__({                                                        \
		__auto_type sim_ptr_ = (PTR);                                  \
		__typeof__((void)0, *sim_ptr_) sim_val_ = (VAL);               \
		sim_atomic_point(sim_ptr_, (MO) == memory_order_seq_cst ? SIM_RMW : SIM_STORE); \
		__atomic_store(sim_ptr_, &sim_val_, (MO));                     \
	})

#undef atomic_exchange_explicit
#define atomic_exchange_explicit(PTR, VAL, MO)                                 \
	__extension__({                                                        \
		__auto_type sim_ptr_ = (PTR);                                  \
		__typeof__((void)0, *sim_ptr_) sim_val_ = (VAL), sim_old_;     \
		sim_atomic_point(sim_ptr_, SIM_RMW);                           \
		__atomic_exchange(sim_ptr_, &sim_val_, &sim_old_, (MO));       \
		sim_old_;                                                      \
	})

#define SIM_CAS_(PTR, EXP, DES, SUC, FAIL, KIND)                               \
	__extension__({                                                        \
		__auto_type sim_ptr_ = (PTR);                                  \
		__auto_type sim_exp_ = (EXP);                                  \
		__typeof__((void)0, *sim_ptr_) sim_des_ = (DES);               \
		sim_atomic_point(sim_ptr_, (KIND))                             \
			? (__atomic_load(sim_ptr_, sim_exp_, (FAIL)), 0)       \
			: __atomic_compare_exchange(sim_ptr_, sim_exp_,        \
						    &sim_des_, 0, (SUC),       \
						    (FAIL));                   \
	})

#undef atomic_compare_exchange_strong_explicit
#define atomic_compare_exchange_strong_explicit(PTR, EXP, DES, SUC, FAIL)      \
	SIM_CAS_(PTR, EXP, DES, SUC, FAIL, SIM_RMW)

#undef atomic_compare_exchange_weak_explicit
#define atomic_compare_exchange_weak_explicit(PTR, EXP, DES, SUC, FAIL)        \
	SIM_CAS_(PTR, EXP, DES, SUC, FAIL, SIM_CAS_WEAK)

#define SIM_FETCH_(OP, PTR, VAL, MO)                                           \
	__extension__({                                                        \
		__auto_type sim_ptr_ = (PTR);                                  \
		sim_atomic_point(sim_ptr_, SIM_RMW);                           \
		OP(sim_ptr_, (VAL), (MO));                                     \
	})

#undef atomic_fetch_add_explicit
#define atomic_fetch_add_explicit(PTR, VAL, MO) SIM_FETCH_(__atomic_fetch_add, PTR, VAL, MO)
#undef atomic_fetch_sub_explicit
#define atomic_fetch_sub_explicit(PTR, VAL, MO) SIM_FETCH_(__atomic_fetch_sub, PTR, VAL, MO)
#undef atomic_fetch_or_explicit
#define atomic_fetch_or_explicit(PTR, VAL, MO) SIM_FETCH_(__atomic_fetch_or, PTR, VAL, MO)
#undef atomic_fetch_and_explicit
#define atomic_fetch_and_explicit(PTR, VAL, MO) SIM_FETCH_(__atomic_fetch_and, PTR, VAL, MO)
#undef atomic_fetch_xor_explicit
#define atomic_fetch_xor_explicit(PTR, VAL, MO) SIM_FETCH_(__atomic_fetch_xor, PTR, VAL, MO)

#endif
