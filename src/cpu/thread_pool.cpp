#include "cpu/thread_pool.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace tropical::cpu {
namespace {

// One job at a time: the caller takes part, helpers join it while it accepts them.
class Pool {
public:
    // Runs the job with up to `helpers` helper threads; false (nothing run) if another job holds the pool.
    bool try_run(int helpers, std::int64_t count, const std::function<void(std::int64_t)>& body) {
        std::unique_lock<std::mutex> owner(job_owner_, std::try_to_lock);
        if (!owner.owns_lock()) return false;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            while (static_cast<int>(workers_.size()) < helpers) workers_.emplace_back([this] { work(); });
            body_ = &body;
            count_ = count;
            next_.store(0);
            wanted_ = helpers;
            joined_ = 0;
            accepting_ = true;
            error_ = nullptr;
            ++generation_;
        }
        wake_.notify_all();
        take_tasks();
        std::unique_lock<std::mutex> lock(mutex_);
        accepting_ = false;  // helpers that wake from now on find nothing to do
        finished_.wait(lock, [this] { return running_ == 0; });
        body_ = nullptr;
        if (error_) std::rethrow_exception(error_);
        return true;
    }

private:
    void take_tasks() {
        for (std::int64_t i = next_.fetch_add(1); i < count_; i = next_.fetch_add(1)) {
            try {
                (*body_)(i);
            } catch (...) {
                std::lock_guard<std::mutex> lock(mutex_);
                if (!error_) error_ = std::current_exception();
            }
        }
    }

    void work() {
        std::uint64_t seen = 0;
        std::unique_lock<std::mutex> lock(mutex_);
        for (;;) {
            wake_.wait(lock, [&] { return generation_ != seen && accepting_ && joined_ < wanted_; });
            seen = generation_;
            ++joined_;
            ++running_;
            lock.unlock();
            take_tasks();
            lock.lock();
            if (--running_ == 0) finished_.notify_all();
        }
    }

    std::mutex job_owner_;  // held by the caller whose job runs
    std::mutex mutex_;      // guards everything below but next_
    std::condition_variable wake_, finished_;
    std::vector<std::thread> workers_;
    const std::function<void(std::int64_t)>* body_ = nullptr;
    std::int64_t count_ = 0;
    std::atomic<std::int64_t> next_{0};
    std::uint64_t generation_ = 0;
    int wanted_ = 0, joined_ = 0, running_ = 0;
    bool accepting_ = false;
    std::exception_ptr error_;
};

// The pool of this process. Never destroyed: its threads wait for work until the process ends, and
// nothing at exit has to join them. After fork() the child has none of the parent's threads, so it
// leaves the inherited pool alone (its state may be mid-job) and makes its own.
Pool& pool() {
    static std::mutex guard;
    static Pool* current = nullptr;
    static pid_t owner = 0;
    std::lock_guard<std::mutex> lock(guard);
    if (!current || owner != getpid()) {
        current = new Pool();
        owner = getpid();
    }
    return *current;
}

thread_local bool t_inside_body = false;

}  // namespace

int available_cores() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
    return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

void parallel_for(int threads, std::int64_t count, const std::function<void(std::int64_t)>& body) {
    const auto run_here = [&] {
        for (std::int64_t i = 0; i < count; ++i) body(i);
    };
    const int helpers = static_cast<int>(std::min<std::int64_t>(threads, count)) - 1;
    if (helpers <= 0 || t_inside_body) return run_here();
    const std::function<void(std::int64_t)> marked = [&](std::int64_t i) {
        t_inside_body = true;
        try {
            body(i);
        } catch (...) {
            t_inside_body = false;
            throw;
        }
        t_inside_body = false;
    };
    if (!pool().try_run(helpers, count, marked)) run_here();
}

}  // namespace tropical::cpu
