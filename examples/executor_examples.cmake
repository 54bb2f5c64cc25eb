# Executor examples (issue 4): custom runner, custom sinks, LLM judge backend stub.
little_loops_add_example(custom_action_runner FILES custom_action_runner.cpp)
little_loops_add_example(custom_event_sink FILES custom_event_sink.cpp)
little_loops_add_example(llm_judge_stub FILES llm_judge_stub.cpp)
