//! Offloading (`target` constructs) and OpenACC, which oxiomp does not provide: each entry
//! gcc's code may call ends the program with an error naming it, rather than running the
//! region somewhere it was not meant to run or skipping it.

macro_rules! unsupported {
    ($($name:ident),* $(,)?) => {$(
        /// Not provided: ends the program with an error naming the entry.
        #[unsafe(no_mangle)]
        pub extern "C" fn $name() {
            crate::fatal(
                stringify!($name),
                "offloading (target constructs) and OpenACC are not supported by oxiomp",
            );
        }
    )*};
}

unsupported!(
    GOMP_offload_register,
    GOMP_offload_register_ver,
    GOMP_offload_unregister,
    GOMP_offload_unregister_ver,
    GOMP_target,
    GOMP_target_data,
    GOMP_target_data_ext,
    GOMP_target_end_data,
    GOMP_target_enter_exit_data,
    GOMP_target_ext,
    GOMP_target_update,
    GOMP_target_update_ext,
    GOMP_teams,
    GOMP_teams4,
    GOACC_data_end,
    GOACC_data_start,
    GOACC_declare,
    GOACC_enter_data,
    GOACC_enter_exit_data,
    GOACC_exit_data,
    GOACC_get_num_threads,
    GOACC_get_thread_num,
    GOACC_parallel,
    GOACC_parallel_keyed,
    GOACC_update,
    GOACC_wait,
);
