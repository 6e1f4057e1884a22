// SPDX-License-Identifier: MIT
// test_preload_cxx.cc - the C++ standard library's locks under the preload:
// std::mutex + std::condition_variable::wait_for (pthread_cond_clockwait),
// std::timed_mutex::try_lock_for (pthread_mutex_clocklock) and
// std::recursive_mutex (a static non-default initialiser, left to glibc).
// Three producers, one consumer; the consumed sum must be exact.  TAP.
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

int main()
{
	const char *it = std::getenv("PRELOAD_TEST_ITERS");
	const long iters = it && std::atol(it) > 0 ? std::atol(it) : 20000;
	std::mutex m;
	std::condition_variable cv;
	std::deque<long> q;
	bool done = false;
	long sum = 0, timed_ok = 0;
	std::timed_mutex tm;
	std::recursive_mutex rm;
	std::thread consumer([&] {
		std::unique_lock<std::mutex> l(m);
		for (;;) {
			cv.wait_for(l, std::chrono::seconds(5), [&] { return !q.empty() || done; });
			if (q.empty() && done)
				break;
			for (; !q.empty(); q.pop_front())
				sum += q.front();
		}
	});
	std::vector<std::thread> producers;
	for (int p = 0; p < 3; p++)
		producers.emplace_back([&, p] {
			for (long i = 0; i < iters; i++) {
				{
					std::lock_guard<std::mutex> g(m);
					q.push_back(i * 3 + p);
				}
				cv.notify_one();
				{
					std::lock_guard<std::recursive_mutex> a(rm);
					std::lock_guard<std::recursive_mutex> b(rm);
				}
				if (tm.try_lock_for(std::chrono::microseconds(50))) {
					std::lock_guard<std::recursive_mutex> a(rm);
					timed_ok++; // guarded by tm
					tm.unlock();
				}
			}
		});
	for (auto &t : producers)
		t.join();
	{
		std::lock_guard<std::mutex> g(m);
		done = true;
	}
	cv.notify_all();
	consumer.join();
	long want = 0;
	for (int p = 0; p < 3; p++)
		for (long i = 0; i < iters; i++)
			want += i * 3 + p;
	std::printf("%s 1 - std::mutex/condition_variable: sum %ld == %ld\n",
		    sum == want ? "ok" : "not ok", sum, want);
	std::printf("%s 2 - std::timed_mutex::try_lock_for succeeded %ld times\n",
		    timed_ok > 0 ? "ok" : "not ok", timed_ok);
	std::printf("1..2\n");
	return sum == want && timed_ok > 0 ? 0 : 1;
}
