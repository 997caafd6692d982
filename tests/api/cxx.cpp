// tests/api/cxx.cpp — C++ standard mutexes on the shim.
//
// libstdc++'s std::mutex, std::timed_mutex and std::recursive_mutex are
// pthread mutexes (timed ones lock through pthread_mutex_clocklock), and
// std::condition_variable waits with pthread_cond_wait.  Producers and
// consumers over a bounded queue, an exclusion counter, try_lock_for on a
// held mutex, and recursion, with 8 threads.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "api.h"

namespace {

constexpr int kProducers = 4, kConsumers = 4;
constexpr std::size_t kCapacity = 8;

// std::condition_variable::wait, with the release glibc does inside stated
// for ThreadSanitizer (see api.h).
template <class Predicate>
void wait_for(std::condition_variable &cv, std::unique_lock<std::mutex> &lock, Predicate ready)
{
	while (!ready()) {
		api_wait_releases(lock.mutex()->native_handle());
		cv.wait(lock);
		api_wait_reacquired(lock.mutex()->native_handle());
	}
}

struct Exclusion {
	std::atomic<int> occupancy{0};
	std::atomic<long> overlaps{0};
	void enter()
	{
		if (occupancy.fetch_add(1, std::memory_order_relaxed) != 0)
			overlaps.fetch_add(1, std::memory_order_relaxed);
	}
	void leave() { occupancy.fetch_sub(1, std::memory_order_relaxed); }
};

void producers_and_consumers()
{
	const long per_producer = 8000 / API_SCALE;
	const long total = kProducers * per_producer;
	std::mutex m;
	std::condition_variable not_full, not_empty;
	std::deque<long> queue;
	long consumed = 0, consumed_sum = 0;
	Exclusion exclusion;

	std::vector<std::thread> threads;
	for (int p = 0; p < kProducers; p++)
		threads.emplace_back([&, p] {
			for (long i = 0; i < per_producer; i++) {
				std::unique_lock<std::mutex> lock(m);
				wait_for(not_full, lock, [&] { return queue.size() < kCapacity; });
				exclusion.enter();
				CHECK_EQ(api_owner(m.native_handle()), gettid());
				queue.push_back(p * per_producer + i);
				exclusion.leave();
				not_empty.notify_one();
			}
		});
	for (int c = 0; c < kConsumers; c++)
		threads.emplace_back([&] {
			std::unique_lock<std::mutex> lock(m);
			for (;;) {
				wait_for(not_empty, lock,
					 [&] { return !queue.empty() || consumed == total; });
				if (consumed == total)
					break;
				exclusion.enter();
				CHECK_EQ(api_owner(m.native_handle()), gettid());
				consumed_sum += queue.front();
				queue.pop_front();
				consumed++;
				exclusion.leave();
				if (consumed == total)
					not_empty.notify_all();
				not_full.notify_one();
			}
		});
	for (auto &t : threads)
		t.join();
	CHECK_EQ(consumed, total);
	CHECK_EQ(consumed_sum, total * (total - 1) / 2);
	CHECK_EQ(exclusion.overlaps.load(std::memory_order_relaxed), 0);
	CHECK_EQ(api_word(m.native_handle()), 0);
}

void exclusion_counter()
{
	const long iterations = 20000 / API_SCALE;
	const int threads_count = 8;
	std::mutex m;
	long counter = 0;
	Exclusion exclusion;
	std::vector<std::thread> threads;
	for (int t = 0; t < threads_count; t++)
		threads.emplace_back([&] {
			for (long i = 0; i < iterations; i++) {
				std::lock_guard<std::mutex> guard(m);
				exclusion.enter();
				long seen = counter;
				if ((i & 63) == 0)
					std::this_thread::yield();
				counter = seen + 1;
				exclusion.leave();
			}
		});
	for (auto &t : threads)
		t.join();
	CHECK_EQ(counter, threads_count * iterations);
	CHECK_EQ(exclusion.overlaps.load(std::memory_order_relaxed), 0);
}

// A thread that holds a lockable until released.
template <class Lockable>
struct Holder {
	Lockable &lockable;
	sem_t locked, release;
	std::thread thread;
	explicit Holder(Lockable &l) : lockable(l)
	{
		sem_init(&locked, 0, 0);
		sem_init(&release, 0, 0);
		thread = std::thread([this] {
			lockable.lock();
			sem_post(&locked);
			while (sem_wait(&release) != 0) {
			}
			lockable.unlock();
		});
		while (sem_wait(&locked) != 0) {
		}
	}
	~Holder()
	{
		sem_post(&release);
		thread.join();
		sem_destroy(&locked);
		sem_destroy(&release);
	}
};

void timed_mutex()
{
	using namespace std::chrono;
	std::timed_mutex m;
	CHECK(m.try_lock_for(milliseconds(10)));     // free
	m.unlock();
	{
		Holder<std::timed_mutex> holder(m);
		auto wait = milliseconds(30);
		auto start = steady_clock::now();
		CHECK(!m.try_lock_for(wait));
		CHECK(steady_clock::now() - start >= wait);
		auto deadline = system_clock::now() + milliseconds(20);
		CHECK(!m.try_lock_until(deadline));
		CHECK(system_clock::now() >= deadline);
		CHECK(!m.try_lock());
	}
	CHECK(m.try_lock_for(milliseconds(10)));
	CHECK_EQ(api_owner(m.native_handle()), gettid());
	m.unlock();
}

void recursive_mutex()
{
	std::recursive_mutex m;
	auto try_elsewhere = [&m] {
		bool got = false;
		std::thread([&] {
			got = m.try_lock();
			if (got)
				m.unlock();
		}).join();
		return got;
	};
	m.lock();
	m.lock();
	CHECK(m.try_lock());
	CHECK_EQ(m.native_handle()->__data.__count, 3);
	CHECK(!try_elsewhere());
	m.unlock();
	m.unlock();
	CHECK(!try_elsewhere());
	m.unlock();
	CHECK(try_elsewhere());

	std::recursive_timed_mutex timed;
	timed.lock();
	CHECK(timed.try_lock_for(std::chrono::milliseconds(10)));   // owner: one more level
	{
		bool got = true;
		std::thread([&] { got = timed.try_lock_for(std::chrono::milliseconds(20)); }).join();
		CHECK(!got);
	}
	timed.unlock();
	timed.unlock();
}

}  // namespace

int main()
{
	api_start("cxx");
	timed_mutex();
	recursive_mutex();
	exclusion_counter();
	producers_and_consumers();
	return check_report("cxx");
}
