// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cfi_cxx.cpp: a C++ program shaped like a prover's host side, built with
 * g++ -O2 and no frame pointers (GCC's default), for the --stacks cfi walk:
 * a producer hands batches to workers through a std::condition_variable
 * queue, workers contend on a std::mutex for a shared table and allocate
 * (std::vector, std::map), and one thread sleeps between "launches".
 * Usage: cfi_cxx [SECONDS]
 */
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace prover {

struct Queue {
	std::mutex mu;
	std::condition_variable cv;
	std::deque<std::vector<unsigned long>> jobs;
	bool done = false;
};

static std::mutex table_mu;
static std::map<unsigned long, unsigned long> table;

__attribute__((noinline)) static unsigned long reduce(const std::vector<unsigned long> &v)
{
	unsigned long acc = 0;

	for (unsigned long x : v)
		acc = acc * 6364136223846793005UL + x;
	return acc;
}

__attribute__((noinline)) static void commit(unsigned long key, unsigned long val)
{
	std::lock_guard<std::mutex> g(table_mu);

	table[key % 4096] ^= val;
	/* Hold it a while: the other workers wait for it. */
	std::this_thread::sleep_for(std::chrono::microseconds(200));
}

__attribute__((noinline)) static bool take(Queue &q, std::vector<unsigned long> &out)
{
	std::unique_lock<std::mutex> l(q.mu);

	q.cv.wait(l, [&] { return q.done || !q.jobs.empty(); });
	if (q.jobs.empty())
		return false;
	out = std::move(q.jobs.front());
	q.jobs.pop_front();
	return true;
}

__attribute__((noinline)) static void worker(Queue &q)
{
	std::vector<unsigned long> job;

	while (take(q, job))
		commit(job.size(), reduce(job));
}

__attribute__((noinline)) static void launcher(Queue &q, int seconds)
{
	auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
	unsigned long seed = 1;

	while (std::chrono::steady_clock::now() < end) {
		std::vector<unsigned long> v(20000 + seed % 5000);

		for (auto &x : v)
			x = seed = seed * 2862933555777941757UL + 3037000493UL;
		{
			std::lock_guard<std::mutex> g(q.mu);
			q.jobs.push_back(std::move(v));
		}
		q.cv.notify_one();
		std::this_thread::sleep_for(std::chrono::milliseconds(1));
	}
	std::lock_guard<std::mutex> g(q.mu);
	q.done = true;
	q.cv.notify_all();
}

} // namespace prover

int main(int argc, char **argv)
{
	int seconds = argc > 1 ? std::atoi(argv[1]) : 2;
	prover::Queue q;
	std::vector<std::thread> ts;

	for (int i = 0; i < 3; i++)
		ts.emplace_back(prover::worker, std::ref(q));
	prover::launcher(q, seconds);
	for (auto &t : ts)
		t.join();
	std::printf("%zu keys\n", prover::table.size());
	return 0;
}
